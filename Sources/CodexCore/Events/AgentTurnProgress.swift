/// Provider progress within a turn: message boundaries, reasoning-summary text and web-search activity.
public enum AgentTurnProgress: Sendable, Hashable, Codable {
    /// A message started (with its phase when the provider gave one).
    case messageStarted(itemID: String, phase: AgentMessagePhase?)
    /// A message finished.
    case messageCompleted(itemID: String, phase: AgentMessagePhase?)
    /// A piece of reasoning-summary text (raw private reasoning is never exposed).
    case reasoningSummaryDelta(itemID: String, summaryIndex: Int, delta: String)
    /// Web-search activity (`in_progress`, `searching`, `completed`, …), with the query when known.
    case webSearch(itemID: String, status: String, query: String?)
    /// A durable turn continues after a crash or a wait: at model pass `pass`, its request's `attempt`
    /// (1 when the request was never sent, more when one was cut short), with `reusedResults` calls of
    /// the unfinished batch answered from the journal instead of run again.
    case resumed(pass: Int, attempt: Int, reusedResults: Int)
    /// A running tool call reported progress (``ToolExecutionContext/reportProgress(_:total:message:)``
    /// in CodexRuntime; MCP tools forward their server's progress notifications): `progress` so far,
    /// out of `total` when known, with a line describing the step when given.
    case toolProgress(invocationID: ToolInvocationID, progress: Double, total: Double?, message: String?)
}
