public import CodexCore

extension AgentRuntime {
    /// The usage ledger's records matching `query`: one per model response of a persistent turn, with
    /// its thread, turn, account binding, model, date and token counts, oldest first. Writes the runtime
    /// has queued are stored before the read.
    ///
    /// ```swift
    /// let records = try await runtime.usage(matching: AgentUsageQuery(threadID: thread.id))
    /// let byModel = AgentUsageSummary(records, by: .model, prices: prices)
    /// ```
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `invalid_configuration` when the state store keeps no
    ///   ledger (``CodexCore/UsageRecording``: the SQLite, PostgreSQL and in-memory stores do), or the
    ///   store's error.
    public func usage(matching query: AgentUsageQuery = AgentUsageQuery()) async throws -> [AgentUsageRecord] {
        try await writer.readUsage(query)
    }

    /// The ledger's records matching `query`, grouped and totalled (and priced with `prices`, versioned
    /// by date, when given). The records are read as a stream (``CodexCore/UsageRecording/forEachUsageRecord(matching:_:)``):
    /// memory holds the groups, not the records.
    ///
    /// - Throws: What ``usage(matching:)`` throws.
    public func usageSummary(
        matching query: AgentUsageQuery = AgentUsageQuery(), by grouping: AgentUsageGrouping, prices: AgentPriceTable? = nil
    ) async throws -> AgentUsageSummary {
        try await writer.readLedger { store in
            var accumulator = AgentUsageSummary.Accumulator(by: grouping, prices: prices)
            try await store.forEachUsageRecord(matching: query) { accumulator.add($0) }
            return accumulator.summary
        }
    }
}
