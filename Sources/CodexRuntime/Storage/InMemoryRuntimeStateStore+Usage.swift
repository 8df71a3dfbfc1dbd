public import CodexCore
import Synchronization

/// A usage record's identity in the in-memory ledger.
struct UsageKey: Hashable {
    let turn: AgentTurnID
    let sequence: Int
}

extension InMemoryRuntimeStateStore: UsageRecording {
    /// Stores `records`, all or nothing; a record whose `(turnID, sequence)` is stored replaces it (see
    /// ``CodexCore/UsageRecording``).
    /// - Throws: ``CodexCore/AgentRuntimeError`` `thread_not_found` when a record's thread does not
    ///   exist (nothing written).
    public func recordUsage(_ records: [AgentUsageRecord]) async throws {
        guard !records.isEmpty else { return }
        try state.withLock { state throws(AgentRuntimeError) in
            for record in records where state.threads[record.threadID] == nil {
                throw AgentRuntimeError(code: .threadNotFound, message: "no such thread")
            }
            for record in records { state.usage[UsageKey(turn: record.turnID, sequence: record.sequence)] = record }
        }
    }

    /// The records matching `query`, ordered by recorded date, then turn ID, then sequence.
    public func usageRecords(matching query: AgentUsageQuery) async throws -> [AgentUsageRecord] {
        state.withLock { state in state.usage.values.filter(query.matches).sorted(by: AgentUsageRecord.ledgerOrder) }
    }
}
