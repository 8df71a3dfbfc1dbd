/// Checks that a thread's history can be replayed as a Responses input: every tool call has exactly
/// one result after it, no result comes without its call, and every reasoning item is followed by the
/// output item it belongs to (not by a user message, not at the very end). Run it before sending a
/// history; a history cut in the middle of a tool call is refused rather than sent.
///
/// ```swift
/// let items = try await store.history(of: threadID, query: .init(limit: .max)).items
/// try AgentHistoryReplay.validate(items)   // throws AgentRuntimeError history_replay_invalid
/// ```
public enum AgentHistoryReplay {
    /// Throws the first problem found.
    /// - Throws: ``AgentRuntimeError`` `history_replay_invalid`; the message names the item's position
    ///   and the problem, never its content.
    public static func validate(_ items: [AgentHistoryItem]) throws(AgentRuntimeError) {
        var open: [ToolInvocationID: Int] = [:]
        var answered: Set<ToolInvocationID> = []
        func invalid(_ position: Int, _ problem: String) -> AgentRuntimeError {
            AgentRuntimeError(code: .historyReplayInvalid, message: "history item \(position): \(problem)")
        }
        for (position, item) in items.enumerated() {
            switch item {
            case .toolCall(let invocation):
                guard open[invocation.id] == nil, !answered.contains(invocation.id) else {
                    throw invalid(position, "a tool call ID is used twice")
                }
                open[invocation.id] = position
            case .toolResult(let result):
                guard open.removeValue(forKey: result.invocationID) != nil else {
                    throw invalid(position, "a tool result has no earlier call")
                }
                answered.insert(result.invocationID)
            case .reasoning:
                // Skip system events and further reasoning items: a chain of reasoning must end in output.
                let next = items[(position + 1)...].first { item in
                    switch item {
                    case .systemEvent, .reasoning, .contextCompaction: false
                    default: true
                    }
                }
                switch next {
                case .message(let message)? where message.role == .assistant: break
                case .toolCall?: break
                default: throw invalid(position, "a reasoning item is not followed by the output it belongs to")
                }
            case .message(let message):
                if message.role == .user, let first = open.values.min() {
                    throw invalid(first, "a tool call has no result before the next user message")
                }
            case .systemEvent:
                break
            case .contextCompaction:
                // A compaction is recorded between turns: it never splits a call from its result.
                if let first = open.values.min() { throw invalid(first, "a tool call has no result before a compaction") }
            }
        }
        if let first = open.values.min() { throw invalid(first, "a tool call has no result") }
    }
}
