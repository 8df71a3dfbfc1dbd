import CodexCore
import Synchronization

/// Where a turn's producer leaves the decoded structured value and the summary for `send`.
final class TurnOutcome: Sendable {
    private let state = Mutex<(value: (any Sendable)?, summary: AgentTurnSummary?)>((nil, nil))

    func record(value: (any Sendable)?, summary: AgentTurnSummary) {
        state.withLock { $0 = (value, summary) }
    }

    var value: (any Sendable)? { state.withLock { $0.value } }
    var summary: AgentTurnSummary? { state.withLock { $0.summary } }
}
