import Foundation
import Synchronization

/// The store's database: one serialized writer connection and one reader connection (WAL lets it read
/// while the writer writes), each used only on its own serial queue. Work runs on those queues, off
/// Swift's cooperative pool, so a busy wait never blocks unrelated tasks. An in-memory database has a
/// single connection for both; a read-only database has only a reader and refuses every write.
final class SQLiteDatabase: @unchecked Sendable {
    // @unchecked: each connection is touched only on its own serial queue (see `onWriter`/`onReader`);
    // the read-only reader's swap (`readOnlyReader`) is guarded by its Mutex and used on the reader queue.
    private let writer: SQLiteConnection?
    private let reader: SQLiteConnection?
    private let readOnlyReader: Mutex<ReadOnlyReader>?
    private let writerQueue = DispatchQueue(label: "codexkit.sqlite.writer")
    private let readerQueue = DispatchQueue(label: "codexkit.sqlite.reader")
    /// The file's path, or `:memory:`.
    let path: String

    /// A read-only connection and whether it was opened immutable (see ``openReadOnly(_:)``).
    private struct ReadOnlyReader {
        var connection: SQLiteConnection
        /// The file as it was when the immutable connection opened; `nil` once it is an ordinary one.
        var immutableSince: SQLiteDatabaseFile.Identity?
    }

    /// Opens the database for reading and writing: creates a missing file (0600), refuses a file that is
    /// not a database or is another application's database, applies pending migrations in one
    /// transaction, then switches to WAL.
    init(path: String) throws(SQLiteStoreError) {
        self.path = path
        readOnlyReader = nil
        guard path != ":memory:" else {
            let connection = try SQLiteConnection(path: path, mode: .readWrite)
            try Self.configure(connection)
            try SQLiteMigrations.migrate(connection, path: path)
            writer = connection
            reader = nil
            return
        }
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
        try file.checkWritable()
        try file.checkCompanionDirectories()
        let writer = try SQLiteConnection(path: path, mode: .readWrite)
        try Self.configure(writer)
        try SQLiteMigrations.migrate(writer, path: path)
        try writer.enableWAL()
        let reader = try SQLiteConnection(path: path, mode: .readWrite)
        try Self.configure(reader)
        self.writer = writer
        self.reader = reader
    }

    /// Opens an existing database read-only: no file is created, migrated, switched to WAL or changed
    /// in mode. A missing or empty file, a foreign database, a newer schema and a schema that still
    /// needs migrations are typed errors naming the path.
    init(readingAt path: String) throws(SQLiteStoreError) {
        self.path = path
        writer = nil
        reader = nil
        let file = SQLiteDatabaseFile(path: path)
        switch try file.state() {
        case .missing(let parentExists):
            throw SQLiteStoreError(code: .notFound, message: "cannot open \(path): " + (parentExists ? "no such file" : "no such directory"))
        case .notRegularFile:
            throw SQLiteStoreError(code: .openFailed, message: "cannot open \(path): not a regular file")
        case .empty:
            throw SQLiteStoreError(code: .notFound, message: "\(path) is empty: no state store was ever written to it")
        case .file(let walMode):
            let opened = try Self.openReadOnly(file, walMode: walMode)
            try Self.checkReadable(opened.connection, path: path)
            readOnlyReader = Mutex(opened)
        }
    }

    /// Whether the database refuses writes.
    var isReadOnly: Bool { writer == nil }

    /// A database in WAL mode with no `-wal` file is cleanly closed, and nobody writes it: it is opened
    /// immutable, so SQLite creates no `-shm` or `-wal` file (an ordinary read-only open would leave both
    /// behind). Otherwise a writer is, or was, there and an ordinary read-only connection reads its log.
    private static func openReadOnly(_ file: SQLiteDatabaseFile, walMode: Bool) throws(SQLiteStoreError) -> ReadOnlyReader {
        let identity = file.identity()
        if walMode, !file.hasWriteAheadLog, let identity {
            let connection = try SQLiteConnection(path: file.path, mode: .readOnly(immutable: true))
            try connection.execute("PRAGMA foreign_keys=ON; PRAGMA trusted_schema=OFF")
            return ReadOnlyReader(connection: connection, immutableSince: identity)
        }
        let connection = try SQLiteConnection(path: file.path, mode: .readOnly(immutable: false))
        try connection.execute("PRAGMA foreign_keys=ON; PRAGMA trusted_schema=OFF")
        return ReadOnlyReader(connection: connection, immutableSince: nil)
    }

    /// Refuses, for reading, what is not a CodexKit store at the migrations this build knows.
    private static func checkReadable(_ connection: SQLiteConnection, path: String) throws(SQLiteStoreError) {
        switch try SQLiteMigrations.ownership(connection) {
        case .empty:
            throw SQLiteStoreError(code: .notFound, message: "\(path) is a SQLite database without tables: no state store was ever written to it")
        case .foreign:
            throw SQLiteStoreError(code: .foreignDatabase, message: "\(path) is a SQLite database of another application (it has tables and no codex_migrations)")
        case .ours(let applied):
            try SQLiteMigrations.checkKnown(applied, path: path)
            if let missing = SQLiteMigrations.all.first(where: { applied[$0.position] == nil }) {
                throw SQLiteStoreError(
                    code: .schemaOutdated,
                    message: "\(path) needs migration \(missing.position) (\(missing.name)); open it for writing once (codexctl db migrate) to apply it"
                )
            }
        }
    }

    private static func configure(_ connection: SQLiteConnection) throws(SQLiteStoreError) {
        // synchronous=FULL: a committed transaction survives power loss (the WAL is fsynced at every
        // commit), the durability the benchmarks compare at.
        try connection.execute("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA trusted_schema=OFF")
    }

    /// Runs `body` in one write transaction (`BEGIN IMMEDIATE … COMMIT`, rolled back on any error).
    /// - Throws: `sqlite_write_refused` at once for a read-only database (nothing is touched).
    func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteStoreError) -> T) async throws(SQLiteStoreError) -> T {
        let writer = try requireWriter()
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
        if readOnlyReader != nil {
            return try await onQueue(readerQueue) { () throws(SQLiteStoreError) -> T in
                try self.readChecked(body)
            }
        }
        guard let connection = reader ?? writer else { throw SQLiteStoreError(code: .failure, message: "the database has no connection") }
        let queue = reader == nil ? writerQueue : readerQueue
        return try await onQueue(queue) { () throws(SQLiteStoreError) -> T in
            try Self.transaction(connection, body)
        }
    }

    private static func transaction<T>(_ connection: SQLiteConnection, _ body: (SQLiteConnection) throws(SQLiteStoreError) -> T) throws(SQLiteStoreError) -> T {
        try connection.execute("BEGIN")
        defer { try? connection.execute("COMMIT") }
        return try body(connection)
    }

    /// A read on a read-only database. An immutable connection is trusted only while the file is as it
    /// was when it opened and no writer has appeared (no `-wal`), checked before and after the read;
    /// otherwise the connection becomes an ordinary read-only one (which follows the writer's log) and
    /// the read runs again there.
    private func readChecked<T>(_ body: (SQLiteConnection) throws(SQLiteStoreError) -> T) throws(SQLiteStoreError) -> T {
        let file = SQLiteDatabaseFile(path: path)
        guard let (connection, immutableSince) = readOnlyReader?.withLock({ ($0.connection, $0.immutableSince) }) else {
            throw SQLiteStoreError(code: .failure, message: "the database has no read-only connection")
        }
        if let immutableSince, !file.hasWriteAheadLog, file.identity() == immutableSince {
            let value = try Self.transaction(connection, body)
            if !file.hasWriteAheadLog, file.identity() == immutableSince { return value }
        } else if immutableSince == nil {
            return try Self.transaction(connection, body)
        }
        let ordinary = try SQLiteConnection(path: path, mode: .readOnly(immutable: false))
        try ordinary.execute("PRAGMA foreign_keys=ON; PRAGMA trusted_schema=OFF")
        readOnlyReader?.withLock { $0 = ReadOnlyReader(connection: ordinary, immutableSince: nil) }
        return try Self.transaction(ordinary, body)
    }

    /// Runs `body` on the writer queue outside any transaction (schema checks, checkpoints); on a
    /// read-only database, on the reader queue.
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteStoreError) -> T) throws(SQLiteStoreError) -> T {
        let connection: SQLiteConnection
        let queue: DispatchQueue
        if let writer {
            connection = writer
            queue = writerQueue
        } else if let reader = readOnlyReader?.withLock({ $0.connection }) {
            connection = reader
            queue = readerQueue
        } else {
            throw SQLiteStoreError(code: .failure, message: "the database has no connection")
        }
        var outcome: Result<T, SQLiteStoreError>?
        queue.sync {
            do throws(SQLiteStoreError) {
                outcome = .success(try body(connection))
            } catch {
                outcome = .failure(error)
            }
        }
        guard let outcome else { throw SQLiteStoreError(code: .failure, message: "the connection did not run") }
        return try outcome.get()
    }

    private func requireWriter() throws(SQLiteStoreError) -> SQLiteConnection {
        guard let writer else {
            throw SQLiteStoreError(code: .writeRefused, message: "\(path) was opened read-only; nothing was written")
        }
        return writer
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
