package import CodexCore
import Foundation

/// The raw libpq loops `codexctl bench storage --postgres` compares the store with: the same server, the
/// same table and the same row bytes, through a prepared statement on one connection, with no encoding,
/// no locking of the thread's row, no write key and no pool. For benchmarks only.
package enum PostgresBaseline {
    /// The raw insert loop: one connection kept open across the rounds of a run, as the store keeps its
    /// pool's.
    // @unchecked: used by one caller at a time; the bench's handed-off rounds run its transactions on a
    // serial queue while that caller waits, so the connection is never used from two threads at once.
    package final class InsertLoop: @unchecked Sendable {
        private let connection: PostgresConnection
        private let threadID: String
        private var position: Int64 = 0

        /// Connects to the store's database and schema; `threadID` must exist (the bench creates it
        /// through the store).
        /// - Throws: ``PostgresStoreError``.
        package init(connectionString: String, schema: String, threadID: String) throws {
            connection = try PostgresConnection(PostgresConnectionSettings(connectionString: connectionString, schema: schema, readOnly: false))
            self.threadID = threadID
        }

        /// Inserts `rows` after the rows of the earlier rounds, `perTransaction` rows per transaction;
        /// returns the seconds taken.
        /// - Throws: ``PostgresStoreError``.
        package func insert(_ rows: ArraySlice<(kind: String, body: [UInt8])>, perTransaction: Int) throws -> Double {
            let clock = ContinuousClock()
            let started = clock.now
            var index = rows.startIndex
            while index < rows.endIndex {
                let end = min(rows.endIndex, index + perTransaction)
                try connection.execute("BEGIN")
                for row in rows[index..<end] {
                    position += 1
                    try connection.run(
                        "INSERT INTO history_items(thread_id, position, kind, body) VALUES ($1, $2, $3, $4)",
                        [.text(threadID), .integer(position), .text(row.kind), .bytes(row.body)]
                    )
                }
                try connection.execute("COMMIT")
                index = end
            }
            return (clock.now - started).inSeconds
        }
    }

    /// Selects the first `count` rows of `threadID` in order on a new connection, in one read-only
    /// transaction, keeping nothing; returns the seconds taken and the bytes read.
    /// - Throws: ``PostgresStoreError``.
    package static func selectLoop(connectionString: String, schema: String, threadID: String, count: Int) throws -> (seconds: Double, bytes: Int) {
        let connection = try PostgresConnection(PostgresConnectionSettings(connectionString: connectionString, schema: schema, readOnly: true))
        let clock = ContinuousClock()
        let started = clock.now
        var bytes = 0
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try connection.run(
            "SELECT position, body FROM history_items WHERE thread_id = $1 ORDER BY position LIMIT $2", [.text(threadID), .integer(Int64(count))]
        ) { row throws(PostgresStoreError) in bytes += row.withBytes(1) { $0.count } }
        try connection.execute("COMMIT")
        return ((clock.now - started).inSeconds, bytes)
    }
}

extension PostgresBaseline {
    /// Selects the same rows as ``selectLoop(connectionString:schema:threadID:count:)`` and decodes each
    /// into a kept history item with the store's row decoder: the floor under a restore. Returns the
    /// seconds taken and the items decoded.
    /// - Throws: ``PostgresStoreError``.
    package static func selectDecodeLoop(connectionString: String, schema: String, thread: AgentThreadID, count: Int) throws -> (seconds: Double, items: Int) {
        let connection = try PostgresConnection(PostgresConnectionSettings(connectionString: connectionString, schema: schema, readOnly: true))
        let clock = ContinuousClock()
        let started = clock.now
        var items: [AgentHistoryItem] = []
        items.reserveCapacity(count)
        try connection.run(
            "SELECT position, body FROM history_items WHERE thread_id = $1 ORDER BY position LIMIT $2", [.text(thread.rawValue), .integer(Int64(count))]
        ) { row throws(PostgresStoreError) in
            items.append(try row.withBytes(1) { body throws(PostgresStoreError) in try PostgresRuntimeStateStore.decodeItem(body, thread: thread, key: "") })
        }
        return ((clock.now - started).inSeconds, items.count)
    }

    /// Drops `schema` with everything in it (the benchmark's scratch schema).
    /// - Throws: ``PostgresStoreError``.
    package static func dropSchema(connectionString: String, schema: String) throws {
        let connection = try PostgresConnection(PostgresConnectionSettings(connectionString: connectionString, schema: nil, readOnly: false))
        try connection.execute("DROP SCHEMA IF EXISTS \(PostgresConnection.quoted(schema)) CASCADE")
    }
}
