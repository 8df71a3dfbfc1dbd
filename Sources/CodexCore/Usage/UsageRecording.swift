/// A state store that keeps the usage ledger: one ``AgentUsageRecord`` per model response, by thread,
/// turn, account and model, so a host can answer "how many tokens did this thread, account or model
/// use this month" after a restart.
///
/// ```swift
/// try await store.recordUsage([record])
/// let mine = try await store.usageRecords(matching: AgentUsageQuery(accountBinding: "acct-1"))
/// let summary = AgentUsageSummary(mine, by: .model, prices: prices)
/// ```
///
/// A ledger can outgrow memory: ``forEachUsageRecord(matching:_:)`` hands the records over one at a
/// time, so a summary of millions of them holds only its groups.
///
/// ```swift
/// var byDay = AgentUsageSummary.Accumulator(by: .day)
/// try await store.forEachUsageRecord(matching: AgentUsageQuery()) { byDay.add($0) }
/// let summary = byDay.summary
/// ```
///
/// Implementation requirements:
/// - ``recordUsage(_:)`` is atomic per call (a committed transaction for a durable store): every
///   record is stored or none is. A record whose `(turnID, sequence)` is already stored replaces it, so
///   recording the same batch again is idempotent; within one batch the last record of a key wins. A
///   record naming a thread that does not exist fails the whole call with `thread_not_found` and
///   writes nothing. An empty batch writes nothing and does not fail.
/// - ``usageRecords(matching:)`` returns exactly the records ``AgentUsageQuery/matches(_:)`` accepts,
///   ordered by ``AgentUsageRecord/ledgerOrder(_:_:)`` (recorded date, then turn ID, then sequence),
///   every field as it was recorded.
/// - ``forEachUsageRecord(matching:_:)`` calls its body with the same records, ordered by recorded date
///   (records recorded at the same instant may come in another order than ``usageRecords(matching:)``
///   gives them), holding a bounded number of them at a time: a durable store reads them in pages, each
///   page its own snapshot, so a record recorded during the visit may or may not be seen (and one replaced
///   with another date during it may be seen twice). A body that
///   throws ends the visit and the call throws its error. The default implementation reads
///   ``usageRecords(matching:)`` whole: a store whose ledger can outgrow memory implements it.
/// - Deleting a thread deletes its usage records: delete means delete, and the ledger keeps no
///   totals of deleted threads. A host that must keep spending figures after deleting conversations
///   reads and keeps them (for example with ``AgentUsageSummary``) before it deletes.
/// Errors follow ``RuntimeStateStore``'s rules. The store conformance suite checks all of this for
/// every store.
public protocol UsageRecording: RuntimeStateStore {
    /// Stores `records`; a record whose `(turnID, sequence)` is already stored is replaced (idempotent).
    /// - Throws: `thread_not_found` (the store's error type) when a record's thread does not exist;
    ///   nothing is written then.
    func recordUsage(_ records: [AgentUsageRecord]) async throws
    /// The records matching `query`, ordered by recorded date, then turn ID, then sequence.
    func usageRecords(matching query: AgentUsageQuery) async throws -> [AgentUsageRecord]
    /// Calls `body` with each record matching `query`, ordered by recorded date, without holding them all.
    /// - Throws: What `body` throws (the visit ends there), or the store's read error.
    nonisolated(nonsending) func forEachUsageRecord(matching query: AgentUsageQuery, _ body: (AgentUsageRecord) throws -> Void) async throws
}

extension UsageRecording {
    /// Calls `body` with each record ``usageRecords(matching:)`` returns: the whole list is read first.
    /// - Throws: What `body` throws (the visit ends there), or the store's read error.
    public nonisolated(nonsending) func forEachUsageRecord(matching query: AgentUsageQuery, _ body: (AgentUsageRecord) throws -> Void) async throws {
        for record in try await usageRecords(matching: query) { try body(record) }
    }
}
