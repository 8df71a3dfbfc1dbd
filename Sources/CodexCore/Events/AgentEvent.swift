public import CodexSchema

/// An event without a case in this version, kept with its type name and raw payload.
public struct AgentUnknownEvent: Sendable, Hashable, Codable {
    /// The event's type name.
    public var type: String
    /// The raw payload, when there is one.
    public var payload: JSONValue?

    /// Creates an unknown event.
    public init(type: String, payload: JSONValue? = nil) {
        self.type = type
        self.payload = payload
    }
}

/// What a runtime stream emits to the host.
///
/// Switch with a `default` case: new cases are added over time, and ``unknown(_:)`` carries events this
/// version does not model.
public enum AgentEvent: Sendable, Hashable {
    /// A thread was created or restored.
    case threadStarted(AgentThread)
    /// A thread's status changed.
    case threadStatusChanged(AgentThreadID, AgentThreadStatus)
    /// A turn started.
    case turnStarted(AgentTurn)
    /// Provider progress.
    case progress(AgentTurnProgress)
    /// Account limits changed.
    case rateLimitsUpdated([AgentRateLimitSnapshot])
    /// A piece of visible assistant answer text.
    case assistantMessageDelta(AgentThreadID, AgentTurnID, String)
    /// A message was committed to the thread.
    case messageCommitted(AgentMessage)
    /// A validated partial structured payload.
    case structuredOutputPartial(AgentStructuredOutputSnapshot)
    /// The final, validated structured payload.
    case structuredOutputCommitted(AgentStructuredOutputSnapshot)
    /// A tool call needs approval.
    case approvalRequested(AgentApprovalRequest)
    /// An approval was decided.
    case approvalResolved(AgentApprovalResolution)
    /// A tool call started.
    case toolCallStarted(ToolInvocation)
    /// A tool call finished.
    case toolCallFinished(ToolResultEnvelope)
    /// The turn completed successfully.
    case turnCompleted(AgentTurnSummary)
    /// The turn was interrupted; the stream then ends with `CancellationError`.
    case turnInterrupted(AgentTurnInterruption)
    /// The turn failed.
    case turnFailed(AgentRuntimeError)
    /// An event this version does not model.
    case unknown(AgentUnknownEvent)

    /// Whether this event ends the turn.
    public var isTerminal: Bool {
        switch self {
        case .turnCompleted, .turnInterrupted, .turnFailed: return true
        default: return false
        }
    }
}

/// What a backend emits to the runtime for one turn.
public enum AgentBackendEvent: Sendable, Hashable {
    /// The backend accepted the turn.
    case turnStarted(AgentTurnID)
    /// Provider progress.
    case progress(AgentTurnProgress)
    /// Account limits observed.
    case rateLimitsUpdated([AgentRateLimitSnapshot])
    /// Token usage observed for one response.
    case usageUpdated(AgentUsage)
    /// A piece of visible assistant answer text.
    case assistantMessageDelta(String)
    /// An assistant message is complete.
    case assistantMessageCompleted(AgentMessage)
    /// A validated partial structured payload.
    case structuredOutputPartial(AgentStructuredOutputSnapshot)
    /// The final, validated structured payload.
    case structuredOutputCommitted(AgentStructuredOutputSnapshot)
    /// A structured payload failed validation.
    case structuredOutputValidationFailed(AgentRuntimeError)
    /// The model requested one tool call.
    case toolCallRequested(ToolInvocation)
    /// The model requested a batch of tool calls; results are accepted by invocation ID.
    case toolCallsRequested([ToolInvocation])
    /// A steered user message was consumed into the next model request.
    case userMessageAccepted(AgentMessage)
    /// A reasoning item completed; the runtime keeps it in history for stateless replay (`store: false`).
    case reasoningCompleted(AgentReasoningItem)
    /// Provider-managed context changed (e.g. encrypted reasoning items to replay).
    case providerContextUpdated(JSONValue)
    /// The turn completed; required for success (EOF alone is `turn_summary_missing`).
    case turnCompleted(AgentTurnSummary)
    /// An event this version does not model (e.g. an unknown provider event passed through).
    case unknown(AgentUnknownEvent)
}
