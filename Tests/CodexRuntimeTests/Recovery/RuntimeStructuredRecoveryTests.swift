@testable import CodexRuntime
import CodexCore
import CodexRecovery
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization
import Testing

/// A structured result a recovery operation delivers.
struct Digest: AgentStructuredOutput, Equatable {
    let headline: String
    static let responseFormat = AgentStructuredOutputFormat(
        name: "digest", schema: .object(properties: ["headline": .string()], required: ["headline"])
    )
}

/// Structured recovery through `AgentRuntime`: the facade prepares with the runtime's selection and
/// persona, sends through the backend's adapter, and sign-out and background expiry suspend it.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct RuntimeStructuredRecoveryTests {
    /// The payload as it appears inside the SSE event's JSON string.
    private static let digest = #"{\"headline\":\"Markets calm.\"}"#

    private func fixture(
        _ replies: [ScriptedReply], selector: (any CodexModelSelecting)? = nil, activity: AgentBackgroundActivity? = nil
    ) throws -> (LoopbackHTTPServer, AgentRuntime, AgentStructuredRecoveryStore, URL) {
        let server = try LoopbackHTTPServer(replies: replies)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("recovery-\(UUID().uuidString)")
        let store = try AgentStructuredRecoveryStore(directory: directory)
        let runtime = try AgentRuntime(configuration: .init(
            authProvider: APIKeyAuthProvider(apiKey: "sk-test"), backend: try RuntimeModelsTests.backend(server),
            stateStore: InMemoryRuntimeStateStore(), persona: AgentPersonaStack(layers: [.init(name: "editor", instructions: "Be terse.")]),
            modelSelector: selector, backgroundActivity: activity
        ))
        return (server, runtime, store, directory)
    }

    private func ephemeral(_ text: String, purpose: String? = nil) -> Request {
        var request = Request(text: text, executionMode: .ephemeral)
        request.selectionPurpose = purpose
        return request
    }

    @Test func theHandoffRunsThroughTheRuntimeAsTheSpecDescribesIt() async throws {
        let (server, runtime, store, directory) = try fixture([ResponsesScript.completedReply("resp_1", Self.digest)])
        defer { server.shutdown(); try? FileManager.default.removeItem(at: directory) }
        let thread = try await runtime.createThread(configuration: AgentThreadConfiguration(model: .gpt6Astra, reasoningEffort: .high))
        let handle = try await runtime.prepareStructuredRecovery(
            ephemeral("Summarise the news."), in: thread.id, response: Digest.self, store: store, maximumAttempts: 2,
            hostJobID: "job-1", inputRevision: "r1"
        )
        #expect(server.requests.isEmpty, "preparation sends nothing")
        let authorized = Mutex<[UUID]>([])
        let digest = try await runtime.sendRecovering(handle, response: Digest.self, store: store) { attempt in
            authorized.withLock { $0.append(attempt.id) }
            return true
        }
        #expect(digest == Digest(headline: "Markets calm."))
        #expect(authorized.withLock { $0.count } == 1)
        let sent = try JSONValue(parsing: try #require(server.requests.first?.body))
        #expect(sent["model"]?.stringValue == "gpt-6-astra")
        #expect(sent["reasoning"]?["effort"]?.stringValue == "high")
        #expect(sent["instructions"]?.stringValue == "Be terse.")
        #expect(sent["tools"]?.arrayValue?.isEmpty == true)
        #expect(server.requests.first?.header("x-client-request-id") == authorized.withLock { $0.first?.uuidString.lowercased() })

        // Reopening delivers the saved receipt without a request or a callback.
        let again = try await runtime.sendRecovering(handle, response: Digest.self, store: store) { _ in
            Issue.record("no authorization for a saved completion")
            return false
        }
        #expect(again == digest)
        #expect(server.requests.count == 1)
        let status = try await runtime.structuredRecoveryStatus(handle, store: store)
        #expect(status.hasSavedCompletion)
        #expect(try await runtime.structuredRecoveryReceipt(handle, store: store).decode(Digest.self) == digest)
        #expect(try await runtime.structuredRecoveries(store: store).operationIDs == [handle.operationID])
        try await runtime.acknowledgeStructuredRecovery(handle, store: store)
        try await runtime.acknowledgeStructuredRecovery(handle, store: store)
        #expect(try await runtime.structuredRecoveryStatus(handle, store: store).state == .acknowledged)
    }

    @Test func aBackendWithoutTheAdapterIsNotRecoverableAndNothingIsSaved() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("recovery-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try AgentStructuredRecoveryStore(directory: directory)
        let runtime = try AgentRuntime(configuration: .init(
            authProvider: APIKeyAuthProvider(apiKey: "sk-test"), backend: FixtureAgentBackend(turns: []), stateStore: InMemoryRuntimeStateStore()
        ))
        let thread = try await runtime.createThread()
        let error = await #expect(throws: AgentRuntimeError.self) {
            _ = try await runtime.prepareStructuredRecovery(ephemeral("x"), in: thread.id, response: Digest.self, store: store)
        }
        #expect(error?.code == .structuredRecoveryUnsupported)
        #expect(try await runtime.structuredRecoveries(store: store).operationIDs.isEmpty)
    }

    @Test func selectionRunsOnceAtPreparationAndReselectFreezesANewModelForTheSuccessor() async throws {
        let selector = SwitchingSelector(CodexModelConfiguration(model: .gpt6Luna, reasoningEffort: .low))
        let (server, runtime, store, directory) = try fixture(
            [.json(#"{"error":{"message":"bad"}}"#, status: 400), ResponsesScript.completedReply("resp_2", Self.digest)], selector: selector
        )
        defer { server.shutdown(); try? FileManager.default.removeItem(at: directory) }
        let thread = try await runtime.createThread()
        let handle = try await runtime.prepareStructuredRecovery(
            ephemeral("Summarise.", purpose: "secret-purpose"), in: thread.id, response: Digest.self, store: store, maximumAttempts: 1
        )
        #expect(selector.calls == 1)
        await #expect(throws: (any Error).self) { _ = try await runtime.sendRecovering(handle, response: Digest.self, store: store) { _ in true } }
        #expect(selector.calls == 1, "sending never runs selection")
        let first = try #require(server.requests.first?.body)
        #expect(try JSONValue(parsing: first)["model"]?.stringValue == "gpt-6-luna")
        #expect(!String(decoding: first, as: UTF8.self).contains("secret-purpose"))

        selector.answer(CodexModelConfiguration(model: .gpt6Astra))
        let successor = try await runtime.retryStructuredRecovery(handle, retryActionID: "tap-1", store: store, maximumAttempts: 2, selection: .reselect)
        #expect(selector.calls == 2)
        // Repeating the action returns the same successor without selecting again, whatever the policy says now.
        selector.answer(CodexModelConfiguration(model: .gpt6Sol))
        #expect(try await runtime.retryStructuredRecovery(handle, retryActionID: "tap-1", store: store, maximumAttempts: 2, selection: .reselect) == successor)
        #expect(selector.calls == 2)
        let preserved = await #expect(throws: AgentRecoveryError.self) {
            _ = try await runtime.retryStructuredRecovery(handle, retryActionID: "tap-1", store: store, maximumAttempts: 2, selection: .preserve)
        }
        #expect(preserved?.code == .retryConfigurationMismatch, "the same action with another selection is a changed setting")
        let digest = try await runtime.sendRecovering(successor, response: Digest.self, store: store) { _ in true }
        #expect(digest.headline == "Markets calm.")
        #expect(try JSONValue(parsing: try #require(server.requests.last?.body))["model"]?.stringValue == "gpt-6-astra")
        #expect(try await runtime.structuredRecoveryStatus(successor, store: store).previousOperationID == handle.operationID)
        let other = await #expect(throws: AgentRecoveryError.self) {
            _ = try await runtime.retryStructuredRecovery(handle, retryActionID: "tap-2", store: store, maximumAttempts: 2)
        }
        #expect(other?.code == .retryAlreadyCreated)
    }

    @Test func backgroundExpirySuspendsARunningSendAndKeepsItsBudget() async throws {
        let activity = AgentBackgroundActivity()
        let held = ScriptedReply(headers: [.init(name: "Content-Type", value: "text/event-stream")], parts: [.hold], framing: .chunked)
        let (server, runtime, store, directory) = try fixture([held, ResponsesScript.completedReply("resp_2", Self.digest)], activity: activity)
        defer { server.shutdown(); try? FileManager.default.removeItem(at: directory) }
        let thread = try await runtime.createThread()
        let handle = try await runtime.prepareStructuredRecovery(ephemeral("x"), in: thread.id, response: Digest.self, store: store, maximumAttempts: 3)
        let send = Task { try await runtime.sendRecovering(handle, response: Digest.self, store: store) { _ in true } }
        let outcome = await withTaskCancellationHandler {
            _ = await server.waitForRequests(count: 1, timeout: .hangGuard)
            activity.expire()
            return await send.result
        } onCancel: { send.cancel() }
        server.releaseHeld()
        #expect(throws: CancellationError.self) { try outcome.get() }
        let status = try await runtime.structuredRecoveryStatus(handle, store: store)
        #expect(status.state == .suspended)
        #expect(status.attemptsUsed == 1)
        #expect(status.maximumAttempts == 3, "the budget is not reset")
        let digest = try await runtime.sendRecovering(handle, response: Digest.self, store: store) { _ in true }
        #expect(digest.headline == "Markets calm.")
        #expect(try await runtime.structuredRecoveryStatus(handle, store: store).attemptsUsed == 2)
    }

    @Test func signingOutSuspendsARunningSendAndKeepsItsBudget() async throws {
        let held = ScriptedReply(headers: [.init(name: "Content-Type", value: "text/event-stream")], parts: [.hold], framing: .chunked)
        let server = try LoopbackHTTPServer(replies: [held])
        defer { server.shutdown() }
        let directory = try temporaryDirectory("recovery-signout")
        defer { try? FileManager.default.removeItem(at: directory) }
        let secrets = try FileSecureStore(directory: directory.appendingPathComponent("secrets"))
        let store = try AgentStructuredRecoveryStore(directory: directory.appendingPathComponent("recovery"))
        let runtime = try AgentRuntime(configuration: .init(
            authProvider: ChatGPTSessionManager(secureStore: secrets, httpClient: DefaultHTTPClient()), secureStore: secrets,
            backend: try RuntimeModelsTests.backend(server), stateStore: InMemoryRuntimeStateStore()
        ))
        _ = try await runtime.signIn {
            try ChatGPTSession(idToken: TestJWT.idToken(account: "acct-1"), accessToken: TestJWT.accessToken(expiresAt: 4_000_000_000, marker: "a"),
                               refreshToken: "rt-1")
        }
        let thread = try await runtime.createThread()
        let handle = try await runtime.prepareStructuredRecovery(ephemeral("x"), in: thread.id, response: Digest.self, store: store, maximumAttempts: 3)
        let send = Task { try await runtime.sendRecovering(handle, response: Digest.self, store: store) { _ in true } }
        let outcome = await withTaskCancellationHandler {
            _ = await server.waitForRequests(count: 1, timeout: .hangGuard)
            try? await runtime.signOut()
            return await send.result
        } onCancel: { send.cancel() }
        server.releaseHeld()
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(try await runtime.authenticationState() == .signedOut)
        let record = try #require(try store.inventory(binding: "acct-1").operationIDs.first)
        #expect(record == handle.operationID)
        _ = try await runtime.signIn {
            try ChatGPTSession(idToken: TestJWT.idToken(account: "acct-1"), accessToken: TestJWT.accessToken(expiresAt: 4_000_000_000, marker: "b"),
                               refreshToken: "rt-2")
        }
        let status = try await runtime.structuredRecoveryStatus(handle, store: store)
        #expect(status.state == .suspended)
        #expect(status.attemptsUsed == 1)
        #expect(status.maximumAttempts == 3, "sign-out does not reset the budget")
    }

    @Test func aBackendAlreadyServingAnotherRuntimesAccountIsRefused() async throws {
        let server = try LoopbackHTTPServer(replies: [])
        defer { server.shutdown() }
        let backend = try RuntimeModelsTests.backend(server)
        let first = SwitchableAuthProvider()
        _ = try AgentRuntime(configuration: .init(authProvider: first, backend: backend, stateStore: InMemoryRuntimeStateStore()))
        _ = try AgentRuntime(configuration: .init(authProvider: first, backend: backend, stateStore: InMemoryRuntimeStateStore()))
        let error = #expect(throws: AgentRuntimeError.self) {
            _ = try AgentRuntime(configuration: .init(authProvider: SwitchableAuthProvider(), backend: backend, stateStore: InMemoryRuntimeStateStore()))
        }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test func aReselectionKeepsTheSourcesInstructions() async throws {
        let selector = SwitchingSelector(CodexModelConfiguration(model: .gpt6Luna))
        let (server, runtime, store, directory) = try fixture(
            [.json(#"{"error":{"message":"bad"}}"#, status: 400), ResponsesScript.completedReply("resp_2", Self.digest)], selector: selector
        )
        defer { server.shutdown(); try? FileManager.default.removeItem(at: directory) }
        let thread = try await runtime.createThread(persona: AgentPersonaStack(layers: [.init(name: "desk", instructions: "Write for the news desk.")]))
        let handle = try await runtime.prepareStructuredRecovery(ephemeral("Summarise."), in: thread.id, response: Digest.self, store: store, maximumAttempts: 1)
        await #expect(throws: (any Error).self) { _ = try await runtime.sendRecovering(handle, response: Digest.self, store: store) { _ in true } }
        selector.answer(CodexModelConfiguration(model: .gpt6Astra))
        let successor = try await runtime.retryStructuredRecovery(handle, retryActionID: "tap-1", store: store, maximumAttempts: 1, selection: .reselect)
        _ = try await runtime.sendRecovering(successor, response: Digest.self, store: store) { _ in true }
        let bodies = try server.requests.map { try JSONValue(parsing: $0.body) }
        #expect(bodies.map { $0["model"]?.stringValue } == ["gpt-6-luna", "gpt-6-astra"])
        #expect(bodies.map { $0["instructions"]?.stringValue } == ["Write for the news desk.", "Write for the news desk."])
    }

    @Test func backgroundExpiryInterruptsActiveTurns() async throws {
        let activity = AgentBackgroundActivity()
        let store = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(
            backend: FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.hang])]), stateStore: store, backgroundActivity: activity
        ))
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "x"), in: thread.id)
        let consumer = Task { await collect(stream) }
        let result = await withTaskCancellationHandler {
            await eventually("the turn runs") { runtime.activeTurnID(in: thread.id) != nil }
            activity.expire()
            return await consumer.value
        } onCancel: { consumer.cancel() }
        #expect(result.error is CancellationError)
        #expect(try await store.latestTurn(of: thread.id)?.status == .interrupted)
        #expect(activity.expirationCount == 1)
    }
}

/// A selector whose answer the test changes, counting its calls.
final class SwitchingSelector: CodexModelSelecting {
    private let state: Mutex<(answer: CodexModelConfiguration, calls: Int)>

    init(_ answer: CodexModelConfiguration) { state = Mutex((answer, 0)) }

    var calls: Int { state.withLock { $0.calls } }

    func answer(_ configuration: CodexModelConfiguration) { state.withLock { $0.answer = configuration } }

    func selectModel(in context: CodexModelSelectionContext) async throws -> CodexModelSelection {
        let answer = state.withLock { state -> CodexModelConfiguration in
            state.calls += 1
            return state.answer
        }
        return CodexModelSelection(configuration: answer)
    }
}
