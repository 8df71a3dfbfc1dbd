import CodexCore
import CodexRuntime
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization
import Testing

/// An auth provider whose account can be switched, to prove per-account state.
final class SwitchableAuthProvider: AuthProvider {
    private let account = Mutex("acct-a")

    func switchTo(_ id: String) { account.withLock { $0 = id } }

    func credentials() async throws -> AuthCredentials {
        let id = account.withLock { $0 }
        return AuthCredentials(bearerToken: "token-\(id)", accountID: id, binding: id, secrets: ["token-\(id)"])
    }

    func recoverAfterUnauthorized(_ rejected: AuthCredentials) async throws -> AuthCredentials? { nil }

    func currentBinding() async -> String? { account.withLock { $0 } }
}

/// The runtime facade's model discovery, account limits and thread configuration, over the built-in
/// backend (created without credentials: it takes the runtime's) and the loopback server.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct RuntimeModelsTests {
    static let catalog = #"""
    {"models":[
      {"slug":"gpt-6-astra","display_name":"Astra","default_reasoning_level":"low","priority":1,"context_window":200000,
       "supported_reasoning_levels":[{"effort":"low"},{"effort":"high"}],"input_modalities":["text","image"],"visibility":"list"},
      {"slug":"gpt-6-luna","display_name":"Luna","priority":2,"context_window":64000,
       "supported_reasoning_levels":[{"effort":"low"}],"input_modalities":["text"],"visibility":"list"},
      {"slug":"internal-review","display_name":"Review","priority":3,"visibility":"hide"}
    ]}
    """#

    /// A backend without its own credentials, talking to `server`; its HTTP deadlines run on a clock that
    /// never moves, so a loaded machine cannot turn a slow exchange into a timeout.
    static func backend(_ server: LoopbackHTTPServer, configuration: CodexResponsesBackendConfiguration = .init()) throws -> CodexResponsesBackend {
        var configuration = configuration
        configuration.endpoint = try ResponsesEndpoint(baseURL: server.baseURL.appendingPathComponent("api/codex"), profile: .chatGPT)
        if configuration.retryPolicy == .default { configuration.retryPolicy = BackendHarness.fastRetry }
        return CodexResponsesBackend(configuration: configuration, httpClient: DefaultHTTPClient(clock: ManualClock()))
    }

    @Test func listModelsUsesTheRuntimesCredentialsAndCachesPerAccount() async throws {
        let server = try LoopbackHTTPServer { request in
            if request.header("if-none-match") == "\"v1\"" { return ScriptedReply(status: 304) }
            return .json(Self.catalog, headers: [.init(name: "ETag", value: "\"v1\"")])
        }
        defer { server.shutdown() }
        let auth = SwitchableAuthProvider()
        let backend = try Self.backend(server, configuration: .init(modelClientVersion: "0.200.0"))
        let runtime = try AgentRuntime(configuration: .init(authProvider: auth, backend: backend, stateStore: InMemoryRuntimeStateStore()))

        let offline = try await runtime.listModels(policy: .cachedOnly)
        #expect(offline.source == .bundled)
        #expect(server.requests.isEmpty, "cachedOnly never touches the network")

        let catalog = try await runtime.listModels()
        #expect(catalog.source == .remote)
        #expect(catalog.models.map(\.model.rawValue) == ["gpt-6-astra", "gpt-6-luna", "internal-review"])
        #expect(catalog.visibleModels.map(\.model.rawValue) == ["gpt-6-astra", "gpt-6-luna"])
        #expect(catalog.isStale == false)
        let request = try #require(server.requests.first)
        #expect(request.path == "/api/codex/models")
        #expect(request.query == "client_version=0.200.0")
        #expect(request.header("authorization") == "Bearer token-acct-a")

        #expect(try await runtime.listModels().source == .cache)
        #expect(try await runtime.listModels(policy: .cachedOnly).source == .cache)
        #expect(server.requests.count == 1)
        #expect(await backend.contextWindow(for: .gpt6Astra) == 200_000, "the refreshed catalog updates the context-window lookup")
        #expect(await backend.contextWindow(for: "no-such-model") == nil)

        let refreshed = try await runtime.listModels(policy: .refresh)
        #expect(refreshed.source == .remote)
        #expect(server.requests.count == 2)
        #expect(server.requests[1].header("if-none-match") == "\"v1\"", "a refresh revalidates with the ETag")

        auth.switchTo("acct-b")
        #expect(try await runtime.listModels(policy: .cachedOnly).source == .bundled, "another account has no cache yet")
        #expect(await backend.contextWindow(for: .gpt6Astra) == 272_000, "the bundled window for an account without a catalog")
        #expect(try await runtime.listModels().source == .remote)
        #expect(server.requests.last?.header("authorization") == "Bearer token-acct-b")
        #expect(server.requests.last?.header("if-none-match") == nil)
    }

    @Test func withoutCredentialsAnywhereDiscoveryFailsWithNotSignedIn() async throws {
        let server = try LoopbackHTTPServer(replies: [.json(Self.catalog)])
        defer { server.shutdown() }
        let runtime = try AgentRuntime(configuration: .init(backend: try Self.backend(server), stateStore: InMemoryRuntimeStateStore()))
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.listModels() }
        #expect(error?.code == .notSignedIn)
        #expect(server.requests.isEmpty)
    }

    @Test func aBackendWithoutDiscoveryGivesTheBundledCatalog() async throws {
        let runtime = try AgentRuntime(configuration: .init(backend: FixtureAgentBackend(turns: []), stateStore: InMemoryRuntimeStateStore()))
        let catalog = try await runtime.listModels(policy: .refresh)
        #expect(catalog == .bundled)
        let astra = try #require(CodexModelCatalog(models: catalog.models).info(for: .gpt6Astra))
        #expect(astra.defaultReasoningEffort == .low)
        #expect(astra.supportedReasoningEfforts == [.low, .medium, .high, .extraHigh, .max, .ultra])
        #expect(astra.contextWindow == 272_000)
        #expect(try await runtime.rateLimits() == [])
    }

    @Test func accountLimitsAreTheSignedInAccountsLatestIncludingErrorResponses() async throws {
        var reply = ResponsesScript()
        reply.created("resp_1")
        reply.messageDone("msg_1", "Hi.", index: 0)
        reply.completed("resp_1")
        let limited = [
            HTTPHeaderField(name: "x-codex-primary-used-percent", value: "40"), HTTPHeaderField(name: "x-codex-primary-window-minutes", value: "300"),
            HTTPHeaderField(name: "x-codex-secondary-used-percent", value: "10"),
        ]
        let exhausted = [HTTPHeaderField(name: "x-codex-primary-used-percent", value: "100"), HTTPHeaderField(name: "retry-after", value: "0")]
        let server = try LoopbackHTTPServer(replies: [
            .sse(reply.events, headers: limited),
            .json(#"{"error":{"message":"slow down","type":"rate_limit_exceeded"}}"#, status: 429, headers: exhausted),
        ])
        defer { server.shutdown() }
        let auth = SwitchableAuthProvider()
        let backend = try Self.backend(server, configuration: .init(retryPolicy: .disabled))
        let runtime = try AgentRuntime(configuration: .init(authProvider: auth, backend: backend, stateStore: InMemoryRuntimeStateStore()))
        #expect(try await runtime.rateLimits() == [], "nothing observed yet, and no request is made to find out")
        #expect(server.requests.isEmpty)

        let thread = try await runtime.createThread()
        _ = try await runtime.send(Request(text: "Hi"), in: thread.id)
        let first = try await runtime.rateLimits()
        #expect(first.map(\.limitID) == ["codex"])
        #expect(first.first?.primary?.remainingPercent == 60)
        #expect(first.first?.primary?.windowDurationMinutes == 300)
        #expect(first.first?.secondary?.remainingPercent == 90)
        #expect(first.first?.credits == nil, "credits the response did not report are unavailable")

        await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.send(Request(text: "More"), in: thread.id) }
        #expect(try await runtime.rateLimits().first?.primary?.remainingPercent == 0, "an error response's headers count")
        #expect(server.requests.count == 2)

        auth.switchTo("acct-b")
        #expect(try await runtime.rateLimits() == [], "another account's limits are never returned")
    }

    @Test func threadConfigurationIsStoredAndUsedByLaterTurns() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("ok")])
        let store = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: store))
        let thread = try await runtime.createThread(title: "Research", configuration: AgentThreadConfiguration(model: .gpt6Astra))
        #expect(try await store.thread(thread.id)?.configuration == AgentThreadConfiguration(model: .gpt6Astra))
        _ = try await runtime.send(Request(text: "one"), in: thread.id)
        let updated = try await runtime.updateThreadConfiguration(AgentThreadConfiguration(model: .gpt6Luna, reasoningEffort: .high), for: thread.id)
        #expect(updated.configuration.model == .gpt6Luna)
        _ = try await runtime.send(Request(text: "two"), in: thread.id)
        #expect(backend.requests.map(\.model) == [.gpt6Astra, .gpt6Luna])
        #expect(backend.requests.map(\.reasoningEffort) == [nil, .high])
        let missing = await #expect(throws: AgentRuntimeError.self) {
            try await runtime.updateThreadConfiguration(AgentThreadConfiguration(), for: AgentThreadID())
        }
        #expect(missing?.code == .threadNotFound)
    }
}
