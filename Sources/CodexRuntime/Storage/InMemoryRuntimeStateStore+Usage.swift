public import CodexCore
import Foundation
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
    ///   exist, `storage_failure` for a record a durable store could not keep either (a negative token
    ///   count, a date outside the years 0 to 9999); nothing is written then.
    public func recordUsage(_ records: [AgentUsageRecord]) async throws {
        guard !records.isEmpty else { return }
        // What the SQLite and PostgreSQL stores refuse is refused here too, so a host that tests on this
        // store meets the same failures.
        if records.contains(where: \.usage.hasNegativeCount) {
            throw AgentRuntimeError(code: .storageFailure, message: "a usage record with a negative token count cannot be stored")
        }
        if records.contains(where: { !StoredDate.range.contains($0.recordedAt.timeIntervalSinceReferenceDate) }) {
            throw AgentRuntimeError(code: .storageFailure, message: StoredDate.refusal)
        }
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
