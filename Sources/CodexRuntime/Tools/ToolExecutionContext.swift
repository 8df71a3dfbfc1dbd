public import CodexCore
public import CodexSchema
public import Foundation

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
    /// Where progress and images go (nil for a context a test made).
    let hooks: ToolExecutionHooks?

    /// Creates a context (the runtime makes one per call; tests of an executor may make their own, whose
    /// progress and images go nowhere).
    public init(invocation: ToolInvocation, threadID: AgentThreadID, turnID: AgentTurnID, arguments: JSONValue) {
        self.init(invocation: invocation, threadID: threadID, turnID: turnID, arguments: arguments, hooks: nil)
    }

    /// Creates a context wired to a turn.
    init(invocation: ToolInvocation, threadID: AgentThreadID, turnID: AgentTurnID, arguments: JSONValue, hooks: ToolExecutionHooks?) {
        self.invocation = invocation
        self.threadID = threadID
        self.turnID = turnID
        self.arguments = arguments
        self.hooks = hooks
    }

    /// Reports the call's progress: the turn's consumer gets
    /// `.progress(.toolProgress(invocationID:progress:total:message:))` in order with the turn's other
    /// events (a slow consumer slows the reporting tool, never loses a report).
    ///
    /// - Parameters:
    ///   - progress: Progress so far, in the tool's own unit (increasing).
    ///   - total: The total, when known.
    ///   - message: A line describing the step.
    public func reportProgress(_ progress: Double, total: Double? = nil, message: String? = nil) async {
        await hooks?.progress(.toolProgress(invocationID: invocation.id, progress: progress, total: total, message: message))
    }

    /// Keeps an image the call produced (bytes, not a URL) with the turn's tool images: stored in the
    /// thread's history as an image of an assistant message, like downloaded tool images. Only a
    /// complete PNG, JPEG, GIF, WebP, HEIC or HEIF image (by its own signature) of at most 50 MiB is
    /// kept, at most 32 per call; anything else is refused and logged as `tools.image.omitted`.
    ///
    /// - Returns: Whether the image was kept.
    @discardableResult
    public func attachImage(_ data: Data) -> Bool {
        guard let hooks else { return false }
        guard let refusal = hooks.outputs.attach(data, for: invocation.id) else { return true }
        hooks.logSink.record(AgentLogEvent(level: .notice, category: .tools, name: "tools.image.omitted", metadata: ["reason": refusal, "tool": invocation.toolName]))
        return false
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
