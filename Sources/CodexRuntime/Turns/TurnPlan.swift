import CodexCore

/// Everything fixed when a turn is accepted.
struct TurnPlan: Sendable {
    let thread: AgentThread
    let turn: AgentTurn
    let backendRequest: AgentBackendTurnRequest
    let structured: TurnStructuredMode
    var persistent: Bool { turn.executionMode == .threaded }
    var threadID: AgentThreadID { thread.id }
    var turnID: AgentTurnID { turn.id }
}
