package import CodexCore
import Foundation

/// The raw statements `codexctl bench memory` compares the store's search with: the same SQL and
/// bindings as ``SQLiteMemoryStore/search(_:)``'s ranking statements (one per importance level until the
/// limit is filled), stepped on a bare connection, no validation, budget, decoding or explanation. For
/// benchmarks only.
package final class SQLiteMemoryBaseline {
    private let connection: SQLiteConnection

    /// A bare read-write connection to the store at `path` (which must exist).
    /// - Throws: ``SQLiteStoreError``.
    package init(path: String) throws {
        connection = try SQLiteConnection(path: path, mode: .readWrite)
        try connection.execute("PRAGMA synchronous=FULL")
    }

    /// Runs `query`'s ranking statements in a read transaction; returns the rows stepped.
    /// - Throws: ``SQLiteStoreError``.
    package func run(_ query: MemoryQuery) throws -> Int {
        let plan = SQLiteMemorySearchPlan(query)
        var rows = 0
        try connection.execute("BEGIN")
        defer { try? connection.execute("COMMIT") }
        try plan.run(connection) { row throws(SQLiteStoreError) in
            rows += row.text(0)?.utf8.count == 0 ? 0 : 1
            _ = row.real(3)
        }
        return rows
    }
}

extension SQLiteMemoryStore {
    /// Stores many records in one transaction, for benchmark set-up (validated; no dedupe lookup).
    package func insertForBenchmark(_ records: [MemoryRecord]) async throws {
        for record in records { try record.validate() }
        try await write { connection in
            for record in records { _ = try SQLiteMemoryRows.insert(connection, record) }
        }
    }

    /// Folds the write-ahead log into the database file (`PRAGMA wal_checkpoint(TRUNCATE)`).
    package func checkpoint() throws {
        try database.withConnection { connection throws(SQLiteStoreError) in try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
    }
}
