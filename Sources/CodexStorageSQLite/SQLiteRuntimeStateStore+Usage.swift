public import CodexCore
import Foundation

extension SQLiteRuntimeStateStore: UsageRecording {
    /// Stores `records` in one transaction, durable when it returns; a record whose `(turnID, sequence)`
    /// is stored replaces it (see ``CodexCore/UsageRecording``). An empty batch opens no transaction.
    /// - Throws: ``SQLiteStoreError`` `thread_not_found` when a record's thread does not exist (nothing
    ///   written); `sqlite_write_refused` on a store opened read-only.
    public func recordUsage(_ records: [AgentUsageRecord]) async throws {
        guard !records.isEmpty else { return }
        // What a read would refuse is never written.
        guard !records.contains(where: \.usage.hasNegativeCount) else {
            throw SQLiteStoreError(code: .failure, message: "a usage record with a negative token count cannot be stored")
        }
        var encoded: [(record: AgentUsageRecord, body: [UInt8])] = []
        for record in records { encoded.append((record, try Self.encode(record))) }
        let rows = encoded
        let threads = Set(records.map(\.threadID))
        try await database.write { connection throws(SQLiteStoreError) in
            for thread in threads.sorted() { try Self.requireThread(thread, connection: connection) }
            for (record, body) in rows {
                try connection.run(
                    """
                    INSERT INTO usage_records(turn_id, sequence, thread_id, account_binding, model, recorded_at, body) VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(turn_id, sequence) DO UPDATE SET thread_id = excluded.thread_id, account_binding = excluded.account_binding,
                    model = excluded.model, recorded_at = excluded.recorded_at, body = excluded.body
                    """,
                    [
                        .text(record.turnID.rawValue), .integer(Int64(record.sequence)), .text(record.threadID.rawValue),
                        record.accountBinding.map(SQLiteValue.text) ?? .null, .text(record.model), .real(record.recordedAt.timeIntervalSince1970), .blob(body),
                    ]
                )
            }
        }
    }

    /// The records matching `query`, ordered by recorded date, then turn ID, then sequence (it works on
    /// a store opened with ``init(readingAt:)``).
    /// - Throws: ``SQLiteStoreError`` `sqlite_row_undecodable` naming the record (`turn-id/sequence`) for
    ///   a row it cannot read or whose body disagrees with its key.
    public func usageRecords(matching query: AgentUsageQuery) async throws -> [AgentUsageRecord] {
        try await UsageLedgerPages.list { try await forEachUsageRecord(matching: query, $0) }
    }

    /// Calls `body` with each record matching `query`, ordered by recorded date; the records are read
    /// in pages of 1,000, each page its own snapshot (see ``CodexCore/UsageRecording``).
    /// - Throws: What `body` throws, or what ``usageRecords(matching:)`` throws.
    public nonisolated(nonsending) func forEachUsageRecord(matching query: AgentUsageQuery, _ body: (AgentUsageRecord) throws -> Void) async throws {
        try await UsageLedgerPages.visit(matching: query, page: { after in try await usagePage(matching: query, after: after, limit: UsageLedgerPages.size) }, body)
    }

    /// Up to `limit` rows after `after` that the query's columns select (its dates compared exactly by
    /// the caller), and the last row's position when the page was full.
    private func usagePage(
        matching query: AgentUsageQuery, after: UsageLedgerPages.Position?, limit: Int
    ) async throws(SQLiteStoreError) -> (records: [AgentUsageRecord], last: UsageLedgerPages.Position?) {
        var conditions: [String] = []
        var bindings: [SQLiteValue] = []
        func add(_ condition: String, _ values: SQLiteValue...) {
            conditions.append(condition)
            bindings.append(contentsOf: values)
        }
        if let thread = query.threadID { add("thread_id = ?", .text(thread.rawValue)) }
        if let turn = query.turnID { add("turn_id = ?", .text(turn.rawValue)) }
        if let binding = query.accountBinding { add("account_binding = ?", .text(binding)) }
        if let model = query.model { add("model = ?", .text(model)) }
        // The column holds seconds since 1970 as a double; the dates are compared exactly by the
        // caller, so the column only narrows (`<=` for the exclusive end: two dates may share a double).
        if let since = query.since { add("recorded_at >= ?", .real(since.timeIntervalSince1970)) }
        if let until = query.until { add("recorded_at <= ?", .real(until.timeIntervalSince1970)) }
        if let after {
            // The first condition lets the date index find the page's start.
            add("recorded_at >= ?", .real(after.recordedAt))
            add("(recorded_at, turn_id, sequence) > (?, ?, ?)", .real(after.recordedAt), .text(after.turnID), .integer(after.sequence))
        }
        // A key column of another type than its declared one would not compare as the position read
        // from it: such a row is damage, not a page boundary.
        let sql = """
            SELECT turn_id, sequence, thread_id, body, recorded_at,
            typeof(turn_id) = 'text' AND typeof(sequence) = 'integer' AND typeof(recorded_at) IN ('real', 'integer') FROM usage_records
            """
            + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")) + " ORDER BY recorded_at, turn_id, sequence LIMIT \(limit)"
        return try await database.read { [bindings] connection throws(SQLiteStoreError) in
            var records: [AgentUsageRecord] = []
            var last: UsageLedgerPages.Position?
            try connection.run(sql, bindings) { row throws(SQLiteStoreError) in
                let turn = row.text(0) ?? ""
                let sequence = row.integer(1)
                guard row.integer(5) == 1 else {
                    throw SQLiteStoreError(
                        code: .rowUndecodable, message: "a usage row's key columns hold values of another type", table: "usage_records", rowKey: "\(turn)/\(sequence)"
                    )
                }
                records.append(try Self.decodeUsage(turn: turn, sequence: sequence, thread: row.text(2) ?? "", row.blob(3)))
                last = UsageLedgerPages.Position(recordedAt: row.real(4), turnID: turn, sequence: sequence)
            }
            return (records, records.count == limit ? last : nil)
        }
    }

    /// A usage row's body, checked against its key columns.
    static func decodeUsage(turn: String, sequence: Int64, thread: String, _ body: [UInt8]) throws(SQLiteStoreError) -> AgentUsageRecord {
        let key = "\(turn)/\(sequence)"
        let record = try decode(AgentUsageRecord.self, body, table: "usage_records", key: key)
        guard record.turnID.rawValue == turn, Int64(record.sequence) == sequence, record.threadID.rawValue == thread else {
            throw SQLiteStoreError(code: .rowUndecodable, message: "a usage row's body names another turn, request or thread than its key", table: "usage_records", rowKey: key)
        }
        guard !record.usage.hasNegativeCount else {
            throw SQLiteStoreError(code: .rowUndecodable, message: "a usage row holds a negative token count", table: "usage_records", rowKey: key)
        }
        return record
    }
}
