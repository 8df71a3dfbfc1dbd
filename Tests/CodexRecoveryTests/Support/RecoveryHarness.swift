import CodexCore
@testable import CodexRecovery
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization

/// The output type the recovery tests ask for.
struct Verdict: AgentStructuredOutput, Equatable {
    let ok: Bool
    let reason: String
    static let responseFormat = AgentStructuredOutputFormat(
        name: "verdict",
        rawSchema: [
            "type": "object", "properties": ["ok": ["type": "boolean"], "reason": ["type": "string"]],
            "required": ["ok", "reason"], "additionalProperties": false,
        ]
    )
}

/// An auth provider the test controls: the account binding and token can change, renewal after a 401
/// can succeed (new token, same binding) or not, and signing out makes `currentBinding` nil.
final class TestAuthProvider: AuthProvider {
    struct State {
        var binding: String? = RecoveryTestRecords.binding
        var token = "token-1"
        var renewsAfterUnauthorized = true
        var renewals = 0
        /// `false`: `currentBinding()` answers `nil`, as a provider that must fetch credentials to know it.
        var knowsBinding = true
    }

    let state = Mutex(State())
    /// Run at the start of each `credentials()` call once set (after `prepare`, say).
    let onCredentials = Mutex<(@Sendable () async throws -> Void)?>(nil)

    func credentials() async throws -> AuthCredentials {
        if let hook = onCredentials.withLock({ $0 }) { try await hook() }
        return try state.withLock { state in
            guard let binding = state.binding else { throw AgentRuntimeError(code: .notSignedIn, message: "not signed in") }
            return AuthCredentials(bearerToken: state.token, accountID: "acct", binding: binding)
        }
    }

    func recoverAfterUnauthorized(_ rejected: AuthCredentials) async throws -> AuthCredentials? {
        state.withLock { state in
            guard state.renewsAfterUnauthorized, let binding = state.binding else { return nil }
            state.renewals += 1
            state.token = "token-\(state.renewals + 1)"
            return AuthCredentials(bearerToken: state.token, accountID: "acct", binding: binding)
        }
    }

    func currentBinding() async -> String? { state.withLock { $0.knowsBinding ? $0.binding : nil } }
}

/// Records every authorization request and answers from a script (default: approve).
final class AuthorizationLog: Sendable {
    private let state = Mutex<(attempts: [AgentRecoveryAttempt], answers: [Bool])>(([], []))
    /// Called with each attempt the host is asked about, before it answers.
    private let onAuthorize: (@Sendable (AgentRecoveryAttempt) -> Void)?

    init(answers: [Bool] = [], onAuthorize: (@Sendable (AgentRecoveryAttempt) -> Void)? = nil) {
        self.onAuthorize = onAuthorize
        state.withLock { $0.answers = answers }
    }

    var attempts: [AgentRecoveryAttempt] { state.withLock { $0.attempts } }

    var callback: @Sendable (AgentRecoveryAttempt) async throws -> Bool {
        { attempt in
            self.onAuthorize?(attempt)
            return self.state.withLock { state in
                state.attempts.append(attempt)
                return state.answers.isEmpty ? true : state.answers.removeFirst()
            }
        }
    }
}

/// A store, a loopback server speaking scripted Responses streams, and the recovery service talking to
/// it through the real `URLSession` transport.
final class RecoveryHarness: Sendable {
    let scratch: ScratchDirectory
    let store: AgentStructuredRecoveryStore
    let server: LoopbackHTTPServer
    let auth = TestAuthProvider()
    let sink = InMemoryAgentLogSink()
    let recovery: AgentStructuredRecovery
    private let replies: ReplyScript

    static let prompt = "Decide whether shipment 42 may leave today."
    static let policy = AgentRecoveryRetryPolicy(initialBackoff: 0, maximumBackoff: 0)

    init(
        replies: [ScriptedReply], fallback: ScriptedReply = .text("no more replies", status: 599),
        fileSystem: any RecoveryFileSystem = PosixRecoveryFileSystem(),
        timeouts: HTTPTimeouts = HTTPTimeouts(connect: .seconds(10), firstByte: .seconds(20), idle: .seconds(20)),
        storeDirectory: URL? = nil,
        onRequest: (@Sendable () -> Void)? = nil
    ) throws {
        scratch = try ScratchDirectory()
        store = try AgentStructuredRecoveryStore(directory: storeDirectory ?? scratch.storeURL, fileSystem: fileSystem)
        let script = ReplyScript(replies, fallback: fallback)
        self.replies = script
        server = try LoopbackHTTPServer { _ in
            onRequest?()
            return script.next()
        }
        let endpoint = try ResponsesEndpoint(baseURL: server.baseURL, profile: .chatGPT)
        recovery = AgentStructuredRecovery(
            configuration: .init(endpoint: endpoint, timeouts: timeouts),
            httpClient: DefaultHTTPClient(), authProvider: auth, logSink: sink
        )
    }

    deinit { server.shutdown() }

    /// Adds replies to the end of the script.
    func enqueue(_ more: [ScriptedReply]) {
        replies.append(more)
    }

    func prepare(maximumAttempts: Int = 3, policy: AgentRecoveryRetryPolicy = RecoveryHarness.policy, expiresAt: Date? = nil,
                 contractVersion: String? = nil) async throws -> AgentStructuredRecoveryHandle {
        try await recovery.prepare(
            Request(text: Self.prompt, executionMode: .ephemeral), format: Verdict.responseFormat,
            model: .init(model: "gpt-6-astra", reasoningEffort: .low, instructions: "Answer as JSON."), store: store,
            options: .init(maximumAttempts: maximumAttempts, expiresAt: expiresAt, retryPolicy: policy, scope: "campaign-secret-scope",
                           hostJobID: "job-secret-42", inputRevision: "rev-7", contractVersion: contractVersion)
        )
    }

    func send(_ handle: AgentStructuredRecoveryHandle, _ log: AuthorizationLog = AuthorizationLog()) async throws -> Verdict {
        try await recovery.sendRecovering(handle, response: Verdict.self, store: store, authorizeAttempt: log.callback)
    }

    func status(_ handle: AgentStructuredRecoveryHandle) async throws -> AgentStructuredRecoveryStatus {
        try await recovery.status(handle, store: store)
    }

    /// The saved record (white-box).
    func record(_ handle: AgentStructuredRecoveryHandle) throws -> RecoveryOperationRecord? {
        try store.locate(handle.operationID)?.load(RecoveryOperationRecord.self, handle.operationID)
    }

    /// POSTs the server received for `/responses`.
    var generationRequests: [RecordedRequest] { server.requests.filter { $0.path.hasSuffix("/responses") } }
}

/// Scripted Responses streams.
enum Streams {
    static let payload = #"{"ok":true,"reason":"The carrier confirmed pickup."}"#

    static func event(_ type: String, _ sequence: Int, _ fields: String) -> String {
        "event: \(type)\ndata: {\"type\":\"\(type)\",\"sequence_number\":\(sequence),\(fields)}\n\n"
    }

    static func created(_ id: String) -> String { event("response.created", 0, #""response":{"id":"\#(id)","status":"in_progress"}"#) }

    static func delta(_ text: String, _ sequence: Int) -> String {
        event("response.output_text.delta", sequence, #""item_id":"msg_1","output_index":0,"content_index":0,"delta":\#(JSONValue.string(text).canonicalString())"#)
    }

    static func message(_ text: String, _ sequence: Int) -> String {
        let item: JSONValue = [
            "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [["type": "output_text", "text": .string(text), "annotations": []]],
        ]
        return event("response.output_item.done", sequence, #""output_index":0,"item":\#(item.canonicalString())"#)
    }

    static func completed(_ id: String, _ sequence: Int) -> String {
        event("response.completed", sequence, #""response":{"id":"\#(id)","status":"completed"}"#)
    }

    /// A whole successful stream whose message carries `text`.
    static func complete(_ id: String = "resp_ok", text: String = payload) -> ScriptedReply {
        .sse([created(id), delta(String(text.prefix(5)), 1), message(text, 2), completed(id, 3)])
    }

    /// A stream that sends a created event and a delta, then closes without `response.completed`.
    static func disconnected(_ id: String = "resp_cut", sequence: Int = 7) -> ScriptedReply {
        .sse([created(id), delta("{\"ok\"", sequence)], framing: .closeDelimited)
    }

    /// A JSON error reply.
    static func error(status: Int, code: String, type: String = "error", headers: [HTTPHeaderField] = []) -> ScriptedReply {
        .json(#"{"error":{"message":"refused by the test","type":"\#(type)","code":"\#(code)"}}"#, status: status, headers: headers)
    }
}

/// Replies served in order, then a fallback.
final class ReplyScript: Sendable {
    private let state: Mutex<[ScriptedReply]>
    private let fallback: ScriptedReply

    init(_ replies: [ScriptedReply], fallback: ScriptedReply) {
        state = Mutex(replies)
        self.fallback = fallback
    }

    func next() -> ScriptedReply {
        state.withLock { $0.isEmpty ? fallback : $0.removeFirst() }
    }

    func append(_ more: [ScriptedReply]) {
        state.withLock { $0.append(contentsOf: more) }
    }
}
