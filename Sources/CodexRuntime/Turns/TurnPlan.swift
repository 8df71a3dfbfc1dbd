import CodexCore

/// Everything fixed when a turn is accepted.
struct TurnPlan: Sendable {
    let thread: AgentThread
    let turn: AgentTurn
    let backendRequest: AgentBackendTurnRequest
    let structured: TurnStructuredMode
    /// Which memories the instructions carry; `nil` without a memory configuration.
    let memoryApplication: AgentMemoryApplication?
    /// Opened when the backend accepted the turn's first request (before any output or tool effect), or
    /// failed with the error that ended the turn first.
    let readiness = ReadinessLatch()
    var persistent: Bool { turn.executionMode == .threaded }
    var threadID: AgentThreadID { thread.id }
    var turnID: AgentTurnID { turn.id }
}
