package import CodexCore
import Foundation

/// The raw prepared-statement loops `codexctl bench storage` compares the store with: the same SQLite
/// settings (WAL, `synchronous=FULL`) and the same row bytes, but no encoding, no decoding and no
/// store logic. For benchmarks only.
package enum SQLiteBaseline {
    /// The raw insert loop: one connection to the database at `path` (created when missing), kept open
    /// across the rounds of a run the way the store keeps its own, writing the store's keys and columns
    /// byte for byte.
    // @unchecked: used by one caller at a time; the bench's handed-off rounds run its transactions on a
    // serial queue while that caller waits, so the connection is never used from two threads at once.
    package final class InsertLoop: @unchecked Sendable {
        private let connection: SQLiteConnection
        private let threadID: String
        private var position: Int64 = 0

        /// Opens (creating when missing) the database at `path` with the store's settings.
        /// - Throws: ``SQLiteStoreError``.
        package init(path: String, threadID: String) throws {
            try SQLiteDatabaseFile(path: path).createPrivate()
            connection = try SQLiteConnection(path: path, mode: .readWrite)
            try connection.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL")
            try connection.execute("CREATE TABLE IF NOT EXISTS raw_items (thread_id TEXT NOT NULL, position INTEGER NOT NULL, kind TEXT NOT NULL, body BLOB NOT NULL, PRIMARY KEY (thread_id, position)) WITHOUT ROWID")
            self.threadID = threadID
        }

        /// Inserts `rows` (each item's kind and encoded body, as the store writes them) after the rows of
        /// the earlier rounds, `perTransaction` rows per transaction; returns the seconds taken.
        /// - Throws: ``SQLiteStoreError``.
        package func insert(_ rows: ArraySlice<(kind: String, body: [UInt8])>, perTransaction: Int) throws -> Double {
            let clock = ContinuousClock()
            let started = clock.now
            var index = rows.startIndex
            while index < rows.endIndex {
                try connection.execute("BEGIN IMMEDIATE")
                for row in rows[index..<min(rows.endIndex, index + max(1, perTransaction))] {
                    position += 1
                    try connection.run(
                        "INSERT INTO raw_items(thread_id, position, kind, body) VALUES (?, ?, ?, ?)",
                        [.text(threadID), .integer(position), .text(row.kind), .blob(row.body)]
                    )
                }
                try connection.execute("COMMIT")
                index += max(1, perTransaction)
            }
            return (clock.now - started).inSeconds
        }

        /// Moves the write-ahead log into the database file, as the store's own checkpoint does.
        /// - Throws: ``SQLiteStoreError``.
        package func checkpoint() throws {
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// Selects the first `count` rows of `threadID` written by
    /// ``InsertLoop`` in order; returns the seconds taken and the bytes read.
    /// - Throws: ``SQLiteStoreError``.
    package static func selectLoop(path: String, threadID: String, count: Int) throws -> (seconds: Double, bytes: Int) {
        var bytes = 0
        let seconds = try timedSelect(path: path, threadID: threadID, count: count) { row throws(SQLiteStoreError) in bytes += row.blob(0).count }
        return (seconds, bytes)
    }

    /// Selects the same rows as ``selectLoop(path:threadID:count:)`` and decodes each into a kept history item with
    /// the store's own row decoder: the floor under a restore, what remains once the store's queue hop,
    /// paging and image checks are taken away. Returns the seconds taken and the items decoded.
    /// - Throws: ``SQLiteStoreError``.
    package static func selectDecodeLoop(path: String, count: Int, thread: AgentThreadID) throws -> (seconds: Double, items: Int) {
        var items: [AgentHistoryItem] = []
        items.reserveCapacity(count)
        let seconds = try timedSelect(path: path, threadID: thread.rawValue, count: count) { row throws(SQLiteStoreError) in
            items.append(try row.withBlob(0) { body throws(SQLiteStoreError) in try SQLiteRuntimeStateStore.decodeItem(body, thread: thread) })
        }
        return (seconds, items.count)
    }

    /// Decodes each of `bodies` (rows as the store writes them) into a kept history item with the store's
    /// own row decoder, in memory: the decoding share of the floor under a restore, without SQLite.
    /// Returns the seconds taken and the items decoded.
    /// - Throws: ``SQLiteStoreError``.
    package static func decodeLoop(_ bodies: [[UInt8]], thread: AgentThreadID) throws -> (seconds: Double, items: Int) {
        var items: [AgentHistoryItem] = []
        items.reserveCapacity(bodies.count)
        let clock = ContinuousClock()
        let started = clock.now
        for body in bodies {
            items.append(try body.withUnsafeBufferPointer { buffer throws(SQLiteStoreError) in try SQLiteRuntimeStateStore.decodeItem(buffer, thread: thread) })
        }
        return ((clock.now - started).inSeconds, items.count)
    }

    /// Opens its own connection and times one transaction that selects the thread's first `count` rows
    /// in order, handing each to `each`.
    private static func timedSelect(
        path: String, threadID: String, count: Int, _ each: @escaping (SQLiteRow) throws(SQLiteStoreError) -> Void
    ) throws -> Double {
        let connection = try SQLiteConnection(path: path, mode: .readWrite)
        let clock = ContinuousClock()
        let started = clock.now
        try connection.execute("BEGIN")
        try connection.run("SELECT body FROM raw_items WHERE thread_id = ? ORDER BY position LIMIT ?", [.text(threadID), .integer(Int64(count))], row: each)
        try connection.execute("COMMIT")
        return (clock.now - started).inSeconds
    }
}

extension SQLiteRuntimeStateStore {
    /// The kind column and encoded body the store writes for one history item (for benchmark baselines).
    package static func encodedRow(of item: AgentHistoryItem) -> (kind: String, body: [UInt8]) {
        (item.storageKind, item.storageRow())
    }

    /// Folds the write-ahead log into the database file (`PRAGMA wal_checkpoint(TRUNCATE)`).
    package func checkpoint() throws {
        try database.withConnection { connection throws(SQLiteStoreError) in try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
    }
}
