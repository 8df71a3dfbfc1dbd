// The handoff of Docs/Recovery.md, compiled and run unchanged against a scripted provider.
import CodexCore
import CodexRecovery
import CodexRuntime
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization
import Testing

/// The output type the documentation's handoff decodes.
struct Verdict: AgentStructuredOutput {
    let ok: Bool
    let reason: String
    static let responseFormat = AgentStructuredOutputFormat(name: "verdict", schema: .object(properties: ["ok": .boolean, "reason": .string()]))
}

/// The documentation's host: a job, its saved handle, authorizations and commits.
final class DocumentationHost: Sendable {
    struct Job: Sendable {
        let id: String
        let revision: String
    }

    private let state = Mutex<(handles: [String: AgentStructuredRecoveryHandle], authorized: [UUID], commits: [String])>(([:], [], []))

    var authorizations: Int { state.withLock { $0.authorized.count } }
    var commits: [String] { state.withLock { $0.commits } }

    func save(_ handle: AgentStructuredRecoveryHandle, for job: Job) throws {
        state.withLock { $0.handles[job.id] = handle }
    }

    func authorize(operation: UUID, attempt: UUID) async throws -> Bool {
        state.withLock { $0.authorized.append(attempt) }
        return true
    }

    func commit(_ verdict: Verdict, job: String, revision: String) throws {
        state.withLock { $0.commits.append("\(job)@\(revision): \(verdict.reason)") }
    }
}

@Suite struct RecoveryDocumentationTests {
    @Test func theHandoffOfTheRecoveryPageRunsAsWritten() async throws {
        let directory = try temporaryDirectory("recovery-docs")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer { _ in
            let item: JSONValue = [
                "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [["type": "output_text", "text": #"{"ok":true,"reason":"Approved."}"#]],
            ]
            return .sse([
                "data: " + #"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress"}}"# + "\n\n",
                "data: " + #"{"type":"response.output_item.done","sequence_number":1,"output_index":0,"item":\#(item.canonicalString())}"# + "\n\n",
                "data: " + #"{"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","status":"completed"}}"# + "\n\n",
            ])
        }
        defer { server.shutdown() }
        let auth = APIKeyAuthProvider(apiKey: "sk-docs")
        let stateStore = InMemoryRuntimeStateStore()
        let appSupport = directory
        let prompt = "May shipment 42 leave today?"
        let job = DocumentationHost.Job(id: "job-42", revision: "r7")
        let host = DocumentationHost()

        // From Docs/Recovery.md, "The host handoff" (the backend's endpoint points at the loopback server).
        var backendConfiguration = CodexResponsesBackendConfiguration(model: .gpt6Astra)
        backendConfiguration.endpoint = try ResponsesEndpoint(baseURL: server.baseURL.appendingPathComponent("v1"), profile: .publicAPI)
        let backend = CodexResponsesBackend(configuration: backendConfiguration)
        let runtime = try AgentRuntime(configuration: .init(authProvider: auth, backend: backend, stateStore: stateStore))
        let recoveryStore = try AgentStructuredRecoveryStore(directory: appSupport.appendingPathComponent("recovery"))
        let thread = try await runtime.createThread(title: "Jobs")

        // 1. Prepare: selection runs once, the request is frozen, nothing is sent.
        let handle = try await runtime.prepareStructuredRecovery(
            Request(text: prompt, executionMode: .ephemeral), in: thread.id, response: Verdict.self, store: recoveryStore,
            maximumAttempts: 3, hostJobID: job.id, inputRevision: job.revision, contractVersion: "v1"
        )
        // 2. Persist the handle in the host's job transaction. If that fails, do not send (abandon or keep the orphan).
        try host.save(handle, for: job)
        // 3. Send, or reopen after a relaunch with the same handle. A saved result returns with no POST and no callback.
        let verdict = try await runtime.sendRecovering(handle, response: Verdict.self, store: recoveryStore) { attempt in
            try await host.authorize(operation: attempt.operationID, attempt: attempt.id)  // idempotent per attempt ID
        }
        // 4. Commit idempotently by job + revision (not by operation ID: manual retries make new operation IDs).
        try host.commit(verdict, job: job.id, revision: job.revision)
        // 5. Only after the commit succeeded:
        try await runtime.acknowledgeStructuredRecovery(handle, store: recoveryStore)

        #expect(host.commits == ["job-42@r7: Approved."])
        #expect(host.authorizations == 1)
        #expect(server.requests.count == 1)
        #expect(try await runtime.structuredRecoveryStatus(handle, store: recoveryStore).state == .acknowledged)
    }

    @Test func theManualRetrySampleCompilesAndCreatesTheSuccessor() async throws {
        let app = try FixtureApplication(["alpha": [.status(503, retryAfter: nil)]])
        let runtime = try app.runtime(policy: PurposeSelector(["news": CodexModelConfiguration(model: .gpt6Luna)]))
        let failedHandle = try await app.prepare("alpha", on: runtime, maximumAttempts: 1)
        await #expect(throws: (any Error).self) { _ = try await app.finish("alpha", handle: failedHandle, on: runtime) }
        let recoveryStore = app.recoveryStore
        let savedUserActionID = "user-tap-7"

        // The host persists this action ID before requesting a successor.
        let retryHandle = try await runtime.retryStructuredRecovery(
            failedHandle,
            retryActionID: savedUserActionID,
            store: recoveryStore,
            maximumAttempts: 2,
            selection: .preserve
        )
        // Persist retryHandle for the same logical job/revision before sending it.

        #expect(retryHandle != failedHandle)
        #expect(try await runtime.structuredRecoveryStatus(retryHandle, store: recoveryStore).maximumAttempts == 2)
        #expect(app.transport.requests(for: "alpha").count == 1, "a retry sends nothing by itself")
    }
}
