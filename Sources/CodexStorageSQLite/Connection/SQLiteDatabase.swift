import Foundation

/// The store's database: one serialized writer connection and one reader connection (WAL lets it read
/// while the writer writes), each used only on its own serial queue. Work runs on those queues, off
/// Swift's cooperative pool, so a busy wait never blocks unrelated tasks. An in-memory database has a
/// single connection for both.
final class SQLiteDatabase: @unchecked Sendable {
    // @unchecked: each connection is touched only on its own serial queue (see `onWriter`/`onReader`).
    private let writer: SQLiteConnection
    private let reader: SQLiteConnection?
    private let writerQueue = DispatchQueue(label: "codexkit.sqlite.writer")
    private let readerQueue = DispatchQueue(label: "codexkit.sqlite.reader")
    /// The file's path, or `:memory:`.
    let path: String

    /// Opens (creating if missing) the database and applies the connection settings.
    init(path: String) throws(SQLiteStoreError) {
        self.path = path
        writer = try SQLiteConnection(path: path, create: true)
        try Self.configure(writer, inMemory: path == ":memory:")
        if path == ":memory:" {
            reader = nil
        } else {
            let reader = try SQLiteConnection(path: path, create: false)
            try Self.configure(reader, inMemory: false)
            self.reader = reader
        }
    }

    private static func configure(_ connection: SQLiteConnection, inMemory: Bool) throws(SQLiteStoreError) {
        // WAL: readers never block the writer; synchronous=FULL: a committed transaction survives power
        // loss (the WAL is fsynced at every commit), the durability the benchmarks compare at.
        if !inMemory { try enableWAL(connection) }
        try connection.execute("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA trusted_schema=OFF")
    }

    /// Switches to WAL unless already on. Converting a new file needs an exclusive lock, and SQLite
    /// reports BUSY at once (without the busy handler) when another connection holds a shared one, so
    /// this retries for up to 5 s, then checks that WAL is really on.
    private static func enableWAL(_ connection: SQLiteConnection) throws(SQLiteStoreError) {
        var mode = ""
        for attempt in 0..<500 {
            do throws(SQLiteStoreError) {
                try connection.run("PRAGMA journal_mode=WAL") { row throws(SQLiteStoreError) in mode = row.text(0) ?? "" }
                break
            } catch where error.code == .busy && attempt < 499 {
                usleep(10_000)
            }
        }
        guard mode.lowercased() == "wal" else {
            throw SQLiteStoreError(code: .failure, message: "the database could not be switched to WAL (journal mode \(mode))")
        }
    }

    /// Runs `body` in one write transaction (`BEGIN IMMEDIATE … COMMIT`, rolled back on any error).
    func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteStoreError) -> T) async throws(SQLiteStoreError) -> T {
        let writer = self.writer
        return try await onQueue(writerQueue) { () throws(SQLiteStoreError) -> T in
            try writer.execute("BEGIN IMMEDIATE")
            do throws(SQLiteStoreError) {
                let value = try body(writer)
                try writer.execute("COMMIT")
                return value
            } catch {
                try? writer.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// Runs `body` in one read transaction (a consistent snapshot).
    func read<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteStoreError) -> T) async throws(SQLiteStoreError) -> T {
        let connection = reader ?? writer
        let queue = reader == nil ? writerQueue : readerQueue
        return try await onQueue(queue) { () throws(SQLiteStoreError) -> T in
            try connection.execute("BEGIN")
            defer { try? connection.execute("COMMIT") }
            return try body(connection)
        }
    }

    /// Runs `body` on the writer queue outside any transaction (schema checks, migrations).
    func withWriter<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteStoreError) -> T) throws(SQLiteStoreError) -> T {
        let writer = self.writer
        var outcome: Result<T, SQLiteStoreError>?
        writerQueue.sync {
            do throws(SQLiteStoreError) {
                outcome = .success(try body(writer))
            } catch {
                outcome = .failure(error)
            }
        }
        guard let outcome else { throw SQLiteStoreError(code: .failure, message: "the writer did not run") }
        return try outcome.get()
    }

    private func onQueue<T: Sendable>(
        _ queue: DispatchQueue, _ body: @escaping @Sendable () throws(SQLiteStoreError) -> T
    ) async throws(SQLiteStoreError) -> T {
        let outcome: Result<T, SQLiteStoreError> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(SQLiteStoreError) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try outcome.get()
    }
}
