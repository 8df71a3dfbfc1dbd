import CodexCore
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization
import Testing

@Suite struct ModelCatalogClientTests {
    let catalogJSON = String(decoding: (try? StreamFixtures.raw("responses/codex-models.json")) ?? Data(), as: UTF8.self)

    private func client(_ server: LoopbackHTTPServer, clock: ManualWallClock, auth: any AuthProvider = CountingAuthProvider()) throws -> ModelCatalogClient {
        ModelCatalogClient(
            endpoint: try ResponsesEndpoint(baseURL: server.baseURL.appendingPathComponent("api/codex"), profile: .chatGPT),
            // The catalog's real timeouts (60 s in all) run on a clock that never moves: a loaded machine
            // slows the exchange down, it never turns it into `timed_out`.
            httpClient: DefaultHTTPClient(clock: ManualClock()), authProvider: auth, wallClock: clock
        )
    }

    @Test func fetchesParsesAndRevalidatesWithTheETag() async throws {
        let server = try LoopbackHTTPServer { request in
            if request.header("if-none-match") == "W/\"v1\"" { return ScriptedReply(status: 304) }
            return .json(catalogJSON, headers: [.init(name: "ETag", value: "W/\"v1\"")])
        }
        defer { server.shutdown() }
        let clock = ManualWallClock(Date(timeIntervalSince1970: 1_000))
        let catalog = try client(server, clock: clock)
        let first = try await catalog.catalog(policy: .refresh)
        #expect(first.source == .remote)
        #expect(first.models.map(\.model.rawValue) == ["gpt-5.4", "gpt-5.4-mini", "gpt-5.3-codex", "gpt-5.2", "codex-auto-review"])
        #expect(first.visibleModels.count == 4)
        #expect(first.models[0].supportedReasoningEfforts == [.low, .medium, .high, .extraHigh])
        #expect(first.models[0].contextWindow == 272_000)
        let request = try #require(server.requests.first)
        #expect(request.path == "/api/codex/models")
        #expect(request.query == "client_version=0.153.0")
        #expect(request.header("authorization") == "Bearer token-1")
        #expect(request.header("chatgpt-account-id") == "acct-1")
        #expect(request.header("if-none-match") == nil)

        clock.advance(by: 299)
        #expect(try await catalog.catalog().source == .cache)
        #expect(server.requests.count == 1)
        clock.advance(by: 2)
        let revalidated = try await catalog.catalog()
        #expect(revalidated.source == .remote)
        #expect(revalidated.models == first.models)
        #expect(server.requests.count == 2)
        #expect(server.requests[1].header("if-none-match") == "W/\"v1\"")
        #expect(try await catalog.catalog().fetchedAt == Date(timeIntervalSince1970: 1_301))
    }

    @Test func aDifferentModelsETagMarksTheCacheStale() async throws {
        let server = try LoopbackHTTPServer { _ in .json(catalogJSON, headers: [.init(name: "ETag", value: "\"a\"")]) }
        defer { server.shutdown() }
        let catalog = try client(server, clock: ManualWallClock(Date(timeIntervalSince1970: 10)))
        _ = try await catalog.catalog()
        catalog.noteModelsETag("\"a\"", binding: "acct-1")
        #expect(try await catalog.catalog().source == .cache)
        catalog.noteModelsETag("\"b\"", binding: "acct-1")
        #expect(try await catalog.catalog(policy: .cachedOnly).isStale)
        #expect(try await catalog.catalog().source == .remote)
        #expect(server.requests.count == 2)
    }

    @Test func cachedOnlyNeverTouchesTheNetwork() async throws {
        let server = try LoopbackHTTPServer { _ in .json(catalogJSON) }
        defer { server.shutdown() }
        let auth = BindingOnlyAuth()
        let catalog = try client(server, clock: ManualWallClock(), auth: auth)
        let offline = try await catalog.catalog(policy: .cachedOnly)
        #expect(offline.source == .bundled)
        #expect(offline.models.contains { $0.model == .gpt6Astra })
        #expect(server.requests.isEmpty)
        #expect(auth.credentialCalls == 0)
    }

    @Test func failuresFallBackExceptAuthenticationAndUnderRefresh() async throws {
        let clock = ManualWallClock(Date(timeIntervalSince1970: 0))
        let flaky = try LoopbackHTTPServer(replies: [.json(catalogJSON), .json("{}", status: 503), .json("{}", status: 503)])
        defer { flaky.shutdown() }
        let catalog = try client(flaky, clock: clock)
        _ = try await catalog.catalog()
        clock.advance(by: 400)
        let stale = try await catalog.catalog()
        #expect(stale.source == .cache)
        #expect(stale.isStale)
        await #expect(throws: AgentRuntimeError.self) { try await catalog.catalog(policy: .refresh) }

        let unauthorized = try LoopbackHTTPServer(replies: [.json(#"{"detail":"Unauthorized"}"#, status: 401)])
        defer { unauthorized.shutdown() }
        let error = await #expect(throws: AgentRuntimeError.self) { try await client(unauthorized, clock: clock).catalog() }
        #expect(error?.code == .unauthorized)

        let down = try LoopbackHTTPServer(replies: [.text("nope", status: 500)])
        defer { down.shutdown() }
        #expect(try await client(down, clock: clock).catalog().source == .bundled)
    }

    @Test func oversizedBodiesAreRefused() async throws {
        let huge = #"{"models":[],"pad":""# + String(repeating: "x", count: 9 * 1024 * 1024) + #""}"#
        let server = try LoopbackHTTPServer { _ in .json(huge) }
        defer { server.shutdown() }
        let catalog = try client(server, clock: ManualWallClock())
        let error = await #expect(throws: AgentRuntimeError.self) { try await catalog.catalog(policy: .refresh) }
        #expect(error?.code == .responseTooLarge)
        #expect(try await catalog.catalog().source == .bundled)
    }

    @Test func unknownModelsAndEffortsStayUsable() throws {
        let body = #"{"models":[{"slug":"gpt-7-nova","priority":2,"default_reasoning_level":"hyper","supported_reasoning_levels":[{"effort":"hyper"},{"effort":"low"}],"visibility":"hide"},{"slug":"b","priority":1},{"display_name":"no slug"}]}"#
        let models = try ModelCatalogClient.parse(Array(body.utf8))
        #expect(models.map(\.model.rawValue) == ["b", "gpt-7-nova"])
        #expect(models[1].defaultReasoningEffort == .custom("hyper"))
        #expect(models[1].supportedReasoningEfforts == [.custom("hyper"), .low])
        #expect(!models[1].isVisible)
        #expect(throws: AgentRuntimeError.self) { try ModelCatalogClient.parse(Array("[]".utf8)) }
    }
}

/// Knows its binding without I/O and counts credential requests.
final class BindingOnlyAuth: AuthProvider {
    private let calls = Mutex(0)
    var credentialCalls: Int { calls.withLock { $0 } }

    func credentials() async throws -> AuthCredentials {
        calls.withLock { $0 += 1 }
        return AuthCredentials(bearerToken: "t", binding: "acct-1")
    }

    func recoverAfterUnauthorized(_ rejected: AuthCredentials) async throws -> AuthCredentials? { nil }
    func currentBinding() async -> String? { "acct-1" }
}
