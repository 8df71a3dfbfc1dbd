public import CodexCore
public import CodexSchema

/// What an executor knows about the call it answers: the invocation, its thread and turn, its
/// arguments already parsed and validated, cooperative cancellation, and helpers that build results
/// with the call's identity.
public struct ToolExecutionContext: Sendable {
    /// The call, with its thread and turn set.
    public let invocation: ToolInvocation
    /// The thread of the turn.
    public let threadID: AgentThreadID
    /// The turn.
    public let turnID: AgentTurnID
    /// The arguments, parsed and valid against the tool's input schema.
    public let arguments: JSONValue

    /// Creates a context (the runtime makes one per call; tests of an executor may make their own).
    public init(invocation: ToolInvocation, threadID: AgentThreadID, turnID: AgentTurnID, arguments: JSONValue) {
        self.invocation = invocation
        self.threadID = threadID
        self.turnID = turnID
        self.arguments = arguments
    }

    /// The call's ID.
    public var invocationID: ToolInvocationID { invocation.id }

    /// A key for this call that is the same in every process and every resume of its turn (derived from
    /// the thread, the turn and the call ID): pass it to the systems your tool changes, as a payment
    /// API's idempotency header or a unique column, so that running the call again (a durable turn
    /// resumed after a crash) has its effect once. `ck_` followed by 32 hex digits.
    public var idempotencyKey: String { Self.idempotencyKey(thread: threadID, turn: turnID, call: invocation.id) }

    /// ``idempotencyKey`` of a call.
    static func idempotencyKey(thread: AgentThreadID, turn: AgentTurnID, call: ToolInvocationID) -> String {
        let material = "codexkit.tool-call.v1\n\(thread.rawValue)\n\(turn.rawValue)\n\(call.rawValue)"
        return "ck_" + SHA256.hexDigest(of: Array(material.utf8)).prefix(32)
    }

    /// Whether the turn was interrupted or cancelled: stop soon and throw `CancellationError`.
    public var isCancelled: Bool { Task.isCancelled }

    /// Throws `CancellationError` when the turn was interrupted or cancelled.
    public func checkCancellation() throws { try Task.checkCancellation() }

    /// A successful text result for this call.
    public func success(_ text: String) -> ToolResultEnvelope { .success(invocation, text: text) }

    /// A successful result with several blocks (text and image URLs) for this call.
    public func success(_ content: [ToolResultContent]) -> ToolResultEnvelope {
        ToolResultEnvelope(invocationID: invocation.id, toolName: invocation.toolName, status: .success, content: content)
    }

    /// A failed result for this call; the model reads `message`.
    public func failure(_ message: String) -> ToolResultEnvelope { .failure(invocation, message: message) }
}
