/// Reading a usage ledger page by page, in the order of its date column and key: the loop the durable
/// stores share behind ``UsageRecording/forEachUsageRecord(matching:_:)``.
package enum UsageLedgerPages {
    /// Where a page ended: the last row's date column (seconds since 1970), turn ID and sequence.
    package struct Position: Sendable, Hashable {
        /// The row's date column.
        package var recordedAt: Double
        /// The row's turn ID.
        package var turnID: String
        /// The row's sequence.
        package var sequence: Int64

        /// A position.
        package init(recordedAt: Double, turnID: String, sequence: Int64) {
            self.recordedAt = recordedAt
            self.turnID = turnID
            self.sequence = sequence
        }
    }

    /// How many rows a page reads.
    package static let size = 1_000

    /// Calls `body` with each record of each page `page` reads that `query` matches (the dates compared
    /// exactly here: a store's column only narrows), until a page says it was the last.
    /// - Parameter page: Reads the page after a position (`nil`: the first); returns its records and, when
    ///   more may follow, its last row's position.
    package nonisolated(nonsending) static func visit(
        matching query: AgentUsageQuery, page: (Position?) async throws -> (records: [AgentUsageRecord], last: Position?),
        _ body: (AgentUsageRecord) throws -> Void
    ) async throws {
        var after: Position?
        repeat {
            let read = try await page(after)
            for record in read.records where query.matches(record) { try body(record) }
            after = read.last
        } while after != nil
    }

    /// Every record `query` matches, in ledger order (``AgentUsageRecord/ledgerOrder(_:_:)``), read
    /// through `visit`, each key once: a record replaced with another date between two pages is seen
    /// twice by the visit, and its later version is kept.
    package nonisolated(nonsending) static func list(
        _ visit: ((AgentUsageRecord) throws -> Void) async throws -> Void
    ) async throws -> [AgentUsageRecord] {
        var records: [String: AgentUsageRecord] = [:]
        try await visit { records["\($0.turnID.rawValue)\u{0}\($0.sequence)"] = $0 }
        return records.values.sorted(by: AgentUsageRecord.ledgerOrder)
    }
}
