public import CodexCore

/// One completed turn's memory application, as stored with its `turn_completed` event.
public struct AgentTurnMemoryApplication: Sendable, Hashable {
    /// The turn.
    public var turnID: AgentTurnID
    /// Which memories its instructions carried.
    public var application: AgentMemoryApplication

    /// Creates an entry.
    public init(turnID: AgentTurnID, application: AgentMemoryApplication) {
        self.turnID = turnID
        self.application = application
    }
}

extension AgentRuntime {
    /// The memory applications stored with a thread's completed turns, oldest first (turns completed
    /// without a memory configuration have none). Reads only.
    ///
    /// ```swift
    /// for entry in try await runtime.fetchMemoryApplications(id: thread.id) {
    ///     print(entry.turnID, entry.application.memoryIDs, entry.application.instructionsSHA256)
    /// }
    /// ```
    /// - Throws: `thread_not_found`, or the store's error.
    public func fetchMemoryApplications(id threadID: AgentThreadID) async throws -> [AgentTurnMemoryApplication] {
        _ = try await resumeThread(threadID)
        return try await loadHistory(of: threadID).compactMap { item in
            guard case .systemEvent(let event) = item, event.type == .turnCompleted, let application = event.memoryApplication else { return nil }
            return AgentTurnMemoryApplication(turnID: event.turnID, application: application)
        }
    }
}
