import CodexCore

/// A durable turn's journal and where its drive starts: a fresh turn at pass 1, or a resumed one at the
/// point its journal reached (``TurnResumePoint``).
struct TurnDurability: Sendable {
    let journal: TurnJournalWriter
    let policy: AgentTurnRecoveryPolicy
    /// The pass this drive sends first (after finishing ``batch``, the pass after it).
    let pass: Int
    /// The attempt that first request is.
    let attempt: Int
    /// Tool calls the turn asked for before this drive.
    let toolCallsUsed: Int
    /// A batch an earlier process left unfinished, finished before the next request.
    let batch: TurnResumePoint.Batch?
    /// Whether the turn began in an earlier drive (its input is in the thread's history, the backend
    /// replays it from there).
    let isResumed: Bool

    /// A fresh durable turn.
    static func fresh(_ journal: TurnJournalWriter, policy: AgentTurnRecoveryPolicy) -> TurnDurability {
        TurnDurability(journal: journal, policy: policy, pass: 1, attempt: 1, toolCallsUsed: 0, batch: nil, isResumed: false)
    }
}

/// A durable turn parked until approval `request` is answered: the turn ends for now, recorded
/// ``CodexCore/AgentTurnStatus/waitingForApproval``, and no task or memory is held for it.
struct TurnParked: Error {
    let request: AgentApprovalRequest
}
