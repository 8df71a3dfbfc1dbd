import CodexCore

/// Everything fixed when a turn is accepted. A class: the turn's tasks (the driver, each parallel tool
/// call) share one plan by reference instead of copying the thread, the turn and the backend request.
final class TurnPlan: Sendable {
    let thread: AgentThread
    let turn: AgentTurn
    let backendRequest: AgentBackendTurnRequest
    let structured: TurnStructuredMode
    /// Which memories the instructions carry; `nil` without a memory configuration.
    let memoryApplication: AgentMemoryApplication?
    /// The journal and starting point of a durable turn; `nil` for a turn that is not durable.
    let durability: TurnDurability?
    /// The turn's tools (the configured ones and the providers' at the turn's start).
    let tools: ToolRegistry
    /// Opened when the backend accepted the turn's first request (before any output or tool effect), or
    /// failed with the error that ended the turn first.
    let readiness = ReadinessLatch()

    init(
        thread: AgentThread, turn: AgentTurn, backendRequest: AgentBackendTurnRequest, structured: TurnStructuredMode,
        memoryApplication: AgentMemoryApplication?, durability: TurnDurability? = nil, tools: ToolRegistry
    ) {
        self.tools = tools
        self.thread = thread
        self.turn = turn
        self.backendRequest = backendRequest
        self.structured = structured
        self.memoryApplication = memoryApplication
        self.durability = durability
    }

    var persistent: Bool { turn.executionMode == .threaded }
    var threadID: AgentThreadID { thread.id }
    var turnID: AgentTurnID { turn.id }
}
