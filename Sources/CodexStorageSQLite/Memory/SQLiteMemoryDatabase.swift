import CodexCore
import Foundation
import Synchronization

/// The memory store's database file: one connection used only on one serial queue (off Swift's
/// cooperative pool). Opened for writing it is created 0600, migrated in one transaction and switched to
/// WAL with `synchronous=FULL`; opened for reading nothing is created, migrated or changed.
final class SQLiteMemoryDatabase: @unchecked Sendable {
    // @unchecked: the connection is touched only on `queue`; its swap is guarded by the Mutex.
    private let state: Mutex<Connection>
    private let queue = DispatchQueue(label: "codexkit.sqlite.memory")
    /// The file's path, or `:memory:`.
    let path: String
    /// Whether the database refuses writes.
    let isReadOnly: Bool

    /// The connection, and for a read-only one opened immutable, the file as it was then.
    private struct Connection {
        var connection: SQLiteConnection
        var immutableSince: SQLiteDatabaseFile.Identity?
    }

    /// Opens for reading and writing (see ``SQLiteMemoryStore/init(path:)``); `fullTextModule` is the
    /// module probed for (tests name a missing one).
    init(path: String, fullTextModule: String = "fts5") throws(MemoryStoreError) {
        self.path = path
        isReadOnly = false
        try Self.probeFullText(fullTextModule)
        do {
            if path != ":memory:" {
                let file = SQLiteDatabaseFile(path: path)
                switch try file.state() {
                case .missing(let parentExists):
                    guard parentExists else { throw SQLiteStoreError(code: .notFound, message: "cannot create \(path): no such directory") }
                    try file.createPrivate()
                case .notRegularFile:
                    throw SQLiteStoreError(code: .openFailed, message: "cannot open \(path): not a regular file")
                case .empty, .file:
                    file.tightenPermissions()
                }
            }
            let connection = try SQLiteConnection(path: path, mode: .readWrite)
            try connection.execute("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA trusted_schema=OFF")
            try SQLiteMemorySchema.migrate(connection, path: path)
            if path != ":memory:" { try connection.enableWAL() }
            state = Mutex(Connection(connection: connection, immutableSince: nil))
        } catch {
            throw MemoryStoreError.from(error)
        }
    }

    /// Opens an existing store read-only (see ``SQLiteMemoryStore/init(readingAt:)``).
    init(readingAt path: String, fullTextModule: String = "fts5") throws(MemoryStoreError) {
        self.path = path
        isReadOnly = true
        try Self.probeFullText(fullTextModule)
        let file = SQLiteDatabaseFile(path: path)
        do {
            switch try file.state() {
            case .missing(let parentExists):
                throw SQLiteStoreError(code: .notFound, message: "cannot open \(path): " + (parentExists ? "no such file" : "no such directory"))
            case .notRegularFile:
                throw SQLiteStoreError(code: .openFailed, message: "cannot open \(path): not a regular file")
            case .empty:
                throw SQLiteStoreError(code: .notFound, message: "\(path) is empty: no memory store was ever written to it")
            case .file(let walMode):
                // A cleanly closed WAL database is opened immutable, so SQLite creates no -shm or -wal file.
                let immutable = walMode && !file.hasWriteAheadLog ? file.identity() : nil
                let connection = try SQLiteConnection(path: path, mode: .readOnly(immutable: immutable != nil))
                try connection.execute("PRAGMA foreign_keys=ON; PRAGMA trusted_schema=OFF")
                    try SQLiteMemorySchema.checkReadable(connection, path: path)
                state = Mutex(Connection(connection: connection, immutableSince: immutable))
            }
        } catch {
            throw MemoryStoreError.from(error)
        }
    }

    /// Fails, before any file is touched, unless this SQLite can create an FTS5 table (probed on a
    /// private in-memory database).
    private static func probeFullText(_ module: String) throws(MemoryStoreError) {
        let probe: SQLiteConnection
        do throws(SQLiteStoreError) { probe = try SQLiteConnection(path: ":memory:", mode: .readWrite) } catch { throw MemoryStoreError(error) }
        try SQLiteMemorySchema.probeFullText(probe, module: module)
    }

    /// Runs `body` in one write transaction (`BEGIN IMMEDIATE … COMMIT`, rolled back on any error).
    /// - Throws: `memory_write_refused` at once for a read-only database.
    func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws(MemoryStoreError) -> T {
        guard !isReadOnly else { throw MemoryStoreError(code: .writeRefused, message: "\(path) was opened read-only; nothing was written") }
        let connection = state.withLock { $0.connection }
        return try await onQueue { () throws -> T in
            try connection.execute("BEGIN IMMEDIATE")
            do {
                let value = try body(connection)
                try connection.execute("COMMIT")
                return value
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// Runs `body` in one read transaction. A read-only connection opened immutable is trusted only while
    /// the file is as it was and no writer has appeared (checked before and after); otherwise an ordinary
    /// read-only connection, which follows a writer's log, replaces it and the read runs there.
    func read<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws(MemoryStoreError) -> T {
        try await onQueue { () throws -> T in
            let (connection, immutableSince) = self.state.withLock { ($0.connection, $0.immutableSince) }
            guard let immutableSince else { return try Self.transaction(connection, body) }
            let file = SQLiteDatabaseFile(path: self.path)
            if !file.hasWriteAheadLog, file.identity() == immutableSince {
                let value = try Self.transaction(connection, body)
                if !file.hasWriteAheadLog, file.identity() == immutableSince { return value }
            }
            let ordinary = try SQLiteConnection(path: self.path, mode: .readOnly(immutable: false))
            try ordinary.execute("PRAGMA foreign_keys=ON; PRAGMA trusted_schema=OFF")
            self.state.withLock { $0 = Connection(connection: ordinary, immutableSince: nil) }
            return try Self.transaction(ordinary, body)
        }
    }

    /// Runs `body` on the queue outside any transaction (schema version, checkpoints).
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) throws(MemoryStoreError) -> T {
        let connection = state.withLock { $0.connection }
        var outcome: Result<T, MemoryStoreError>?
        queue.sync {
            do {
                outcome = .success(try body(connection))
            } catch {
                outcome = .failure(MemoryStoreError.from(error))
            }
        }
        guard let outcome else { throw MemoryStoreError(code: .storageFailure, message: "the connection did not run") }
        return try outcome.get()
    }

    private static func transaction<T>(_ connection: SQLiteConnection, _ body: (SQLiteConnection) throws -> T) throws -> T {
        try connection.execute("BEGIN")
        defer { try? connection.execute("COMMIT") }
        return try body(connection)
    }

    private func onQueue<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws(MemoryStoreError) -> T {
        let outcome: Result<T, MemoryStoreError> = await withCheckedContinuation { continuation in
            queue.async {
                do {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(MemoryStoreError.from(error)))
                }
            }
        }
        return try outcome.get()
    }
}
