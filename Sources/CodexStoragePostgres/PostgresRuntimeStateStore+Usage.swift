public import CodexCore
import Foundation

extension PostgresRuntimeStateStore: UsageRecording {
    /// Stores `records` in one transaction with their threads' rows locked; a record whose
    /// `(turnID, sequence)` is stored replaces it (see ``CodexCore/UsageRecording``), so a write whose
    /// commit reply was lost is simply run again. An empty batch opens no transaction.
    /// - Throws: ``PostgresStoreError`` `thread_not_found` when a record's thread does not exist (nothing
    ///   written); `postgres_write_refused` on a store opened read-only.
    public func recordUsage(_ records: [AgentUsageRecord]) async throws {
        guard !records.isEmpty else { return }
        // What a read would refuse is never written.
        guard !records.contains(where: \.usage.hasNegativeCount) else {
            throw PostgresStoreError(code: .failure, message: "a usage record with a negative token count cannot be stored")
        }
        var encoded: [(record: AgentUsageRecord, body: [UInt8])] = []
        for record in records { encoded.append((record, try Self.encode(record))) }
        let rows = encoded
        // Threads locked in one order, so two batches over the same threads cannot deadlock.
        let threads = Set(records.map(\.threadID)).sorted()
        try await database.write { connection throws(PostgresStoreError) in
            for thread in threads { try Self.lockThread(thread, connection) }
            for (record, body) in rows {
                try connection.run(
                    """
                    INSERT INTO usage_records(turn_id, sequence, thread_id, account_binding, model, recorded_at, body) VALUES ($1, $2, $3, $4, $5, $6, $7)
                    ON CONFLICT (turn_id, sequence) DO UPDATE SET thread_id = excluded.thread_id, account_binding = excluded.account_binding,
                    model = excluded.model, recorded_at = excluded.recorded_at, body = excluded.body
                    """,
                    [
                        .text(record.turnID.rawValue), .integer(Int64(record.sequence)), .text(record.threadID.rawValue),
                        record.accountBinding.map(PostgresValue.text) ?? .null, .text(record.model), .double(record.recordedAt.timeIntervalSince1970),
                        .bytes(body),
                    ]
                )
            }
        }
    }

    /// The records matching `query`, ordered by recorded date, then turn ID, then sequence (it works on
    /// a store opened with ``init(readingFrom:schema:)``).
    /// - Throws: ``PostgresStoreError`` `postgres_row_undecodable` naming the record (`turn-id/sequence`)
    ///   for a row it cannot read or whose body disagrees with its key.
    public func usageRecords(matching query: AgentUsageQuery) async throws -> [AgentUsageRecord] {
        // Ordered here rather than by the server, whose text order follows the database's collation.
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
    ) async throws(PostgresStoreError) -> (records: [AgentUsageRecord], last: UsageLedgerPages.Position?) {
        var conditions: [String] = []
        var parameters: [PostgresValue] = []
        func parameter(_ value: PostgresValue) -> String {
            parameters.append(value)
            return "$\(parameters.count)"
        }
        if let thread = query.threadID { conditions.append("thread_id = \(parameter(.text(thread.rawValue)))") }
        if let turn = query.turnID { conditions.append("turn_id = \(parameter(.text(turn.rawValue)))") }
        if let binding = query.accountBinding { conditions.append("account_binding = \(parameter(.text(binding)))") }
        if let model = query.model { conditions.append("model = \(parameter(.text(model)))") }
        // The column holds seconds since 1970 as a double; the dates are compared exactly by the
        // caller, so the column only narrows (`<=` for the exclusive end: two dates may share a double).
        if let since = query.since { conditions.append("recorded_at >= \(parameter(.double(since.timeIntervalSince1970)))") }
        if let until = query.until { conditions.append("recorded_at <= \(parameter(.double(until.timeIntervalSince1970)))") }
        if let after {
            // Byte order for the text, whatever the database's collation; the first condition lets the
            // date index find the page's start.
            let date = parameter(.double(after.recordedAt))
            conditions.append("recorded_at >= \(date)")
            conditions.append(
                "(recorded_at, turn_id COLLATE \"C\", sequence) > (\(date), \(parameter(.text(after.turnID))), \(parameter(.integer(after.sequence))))"
            )
        }
        let sql = "SELECT turn_id, sequence, thread_id, body, recorded_at FROM usage_records"
            + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            + " ORDER BY recorded_at, turn_id COLLATE \"C\", sequence LIMIT \(limit)"
        return try await database.read { [parameters] connection throws(PostgresStoreError) in
            var records: [AgentUsageRecord] = []
            var last: UsageLedgerPages.Position?
            try connection.run(sql, parameters) { row throws(PostgresStoreError) in
                let turn = row.text(0) ?? ""
                let sequence = row.integer(1)
                records.append(try Self.decodeUsage(turn: turn, sequence: sequence, thread: row.text(2) ?? "", row.bytes(3)))
                last = UsageLedgerPages.Position(recordedAt: row.double(4), turnID: turn, sequence: sequence)
            }
            return (records, records.count == limit ? last : nil)
        }
    }

    /// A usage row's body, checked against its key columns.
    static func decodeUsage(turn: String, sequence: Int64, thread: String, _ body: [UInt8]) throws(PostgresStoreError) -> AgentUsageRecord {
        let key = "\(turn)/\(sequence)"
        let record = try decode(AgentUsageRecord.self, body, table: "usage_records", key: key)
        guard record.turnID.rawValue == turn, Int64(record.sequence) == sequence, record.threadID.rawValue == thread else {
            throw PostgresStoreError(
                code: .rowUndecodable, message: "a usage row's body names another turn, request or thread than its key", table: "usage_records", rowKey: key
            )
        }
        guard !record.usage.hasNegativeCount else {
            throw PostgresStoreError(code: .rowUndecodable, message: "a usage row holds a negative token count", table: "usage_records", rowKey: key)
        }
        return record
    }
}
