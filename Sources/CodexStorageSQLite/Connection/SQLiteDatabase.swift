import CodexCore
import Foundation
import Synchronization

/// The one SQLite engine every store runs on: one serialized writer connection and one reader
/// connection (WAL lets it read while the writer writes), each used only on its own serial queue. Work
/// runs on those queues, off Swift's cooperative pool, so a busy wait never blocks unrelated tasks. An
/// in-memory database has a single connection for both; a read-only database has only a reader and
/// refuses every write.
///
/// What differs between stores is their ``SQLiteSchema`` (migrations, required tables, companion
/// directories, the words of their errors); opening, permissions, the foreign-database refusal, WAL,
/// the three open modes (write, read-only, immutable) and the migration runner are written once, here
/// and in ``SQLiteMigrator``.
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
    /// What the database holds.
    let schema: SQLiteSchema

    /// A read-only connection and whether it was opened immutable (see ``openReadOnly(_:)``).
    private struct ReadOnlyReader {
        var connection: SQLiteConnection
        /// The file as it was when the immutable connection opened; `nil` once it is an ordinary one.
        var immutableSince: SQLiteDatabaseFile.Identity?
    }

    /// Opens the database for reading and writing: creates a missing file (0600), refuses a file this
    /// process may not write, a companion directory that is not its own, a file that is not a database
    /// and another application's database (leaving its mode as it was), applies pending migrations in
    /// one transaction, makes a file others can read private, then switches to WAL.
    init(path: String, schema: SQLiteSchema) throws(SQLiteStoreError) {
        self.path = path
        self.schema = schema
        readOnlyReader = nil
        guard path != ":memory:" else {
            let connection = try SQLiteConnection(path: path, mode: .readWrite)
            try Self.configure(connection)
            try SQLiteMigrator.migrate(connection, schema, path: path)
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
            break
        }
        try file.checkWritable()
        try file.checkCompanionDirectories(schema.companionDirectorySuffixes)
        let writer = try SQLiteConnection(path: path, mode: .readWrite)
        try Self.configure(writer)
        try SQLiteMigrator.migrate(writer, schema, path: path)
        // Only a file now known to be ours is made private (a refused one keeps its mode), and before
        // WAL mode creates the companions with its mode.
        file.tightenPermissions()
        try writer.enableWAL()
        let reader = try SQLiteConnection(path: path, mode: .readWrite)
        try Self.configure(reader)
        self.writer = writer
        self.reader = reader
    }

    /// Opens an existing database read-only: no file is created, migrated, switched to WAL or changed
    /// in mode. A missing or empty file, a foreign database, a newer schema and a schema that still
    /// needs migrations are typed errors naming the path.
    init(readingAt path: String, schema: SQLiteSchema) throws(SQLiteStoreError) {
        self.path = path
        self.schema = schema
        writer = nil
        reader = nil
        let file = SQLiteDatabaseFile(path: path)
        switch try file.state() {
        case .missing(let parentExists):
            throw SQLiteStoreError(code: .notFound, message: "cannot open \(path): " + (parentExists ? "no such file" : "no such directory"))
        case .notRegularFile:
            throw SQLiteStoreError(code: .openFailed, message: "cannot open \(path): not a regular file")
        case .empty:
            throw SQLiteStoreError(code: .notFound, message: "\(path) is empty: no \(schema.kind) was ever written to it")
        case .file(let walMode):
            let opened = try Self.openReadOnly(file, walMode: walMode)
            try SQLiteMigrator.checkReadable(opened.connection, schema, path: path)
            readOnlyReader = Mutex(opened)
        }
    }

    /// Whether the database refuses writes.
    var isReadOnly: Bool { writer == nil }

    /// A database in WAL mode with no `-wal` file is cleanly closed, and nobody writes it: it is opened
    /// immutable, so SQLite creates no `-shm` or `-wal` file (an ordinary read-only open would leave both
    /// behind). Otherwise a writer is, or was, there and an ordinary read-only connection reads its log.
    private static func openReadOnly(_ file: SQLiteDatabaseFile, walMode: Bool) throws(SQLiteStoreError) -> ReadOnlyReader {
        if walMode, !file.hasWriteAheadLog, let identity = file.identity() {
            return ReadOnlyReader(connection: try readOnlyConnection(file.path, immutable: true), immutableSince: identity)
        }
        return ReadOnlyReader(connection: try readOnlyConnection(file.path, immutable: false), immutableSince: nil)
    }

    private static func readOnlyConnection(_ path: String, immutable: Bool) throws(SQLiteStoreError) -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path, mode: .readOnly(immutable: immutable))
        try connection.execute("PRAGMA foreign_keys=ON; PRAGMA trusted_schema=OFF")
        return connection
    }

    private static func configure(_ connection: SQLiteConnection) throws(SQLiteStoreError) {
        // synchronous=FULL: a committed transaction survives power loss (the WAL is fsynced at every
        // commit), the durability the benchmarks compare at.
        try connection.execute("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA trusted_schema=OFF")
    }

    /// Runs `body` in one write transaction (`BEGIN IMMEDIATE … COMMIT`, rolled back on any error).
    /// - Throws: `body`'s error, or the engine's own failure as a `Failure` (`sqlite_write_refused` at
    ///   once for a read-only database, nothing touched).
    func write<T: Sendable, Failure: SQLiteEngineFailure>(
        _ body: @escaping @Sendable (SQLiteConnection) throws(Failure) -> T
    ) async throws(Failure) -> T {
        let writer: SQLiteConnection
        do throws(SQLiteStoreError) { writer = try requireWriter() } catch { throw Failure(engine: error) }
        return try await onQueue(writerQueue) { () throws(Failure) -> T in
            do throws(SQLiteStoreError) { try writer.execute("BEGIN IMMEDIATE") } catch { throw Failure(engine: error) }
            do throws(Failure) {
                let value = try body(writer)
                do throws(SQLiteStoreError) { try writer.execute("COMMIT") } catch { throw Failure(engine: error) }
                return value
            } catch {
                try? writer.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// Runs `body` in one read transaction (a consistent snapshot).
    /// - Throws: `body`'s error, or the engine's own failure as a `Failure`.
    func read<T: Sendable, Failure: SQLiteEngineFailure>(
        _ body: @escaping @Sendable (SQLiteConnection) throws(Failure) -> T
    ) async throws(Failure) -> T {
        if readOnlyReader != nil {
            return try await onQueue(readerQueue) { () throws(Failure) -> T in try self.readChecked(body) }
        }
        guard let connection = reader ?? writer else { throw Failure(engine: SQLiteStoreError(code: .failure, message: "the database has no connection")) }
        let queue = reader == nil ? writerQueue : readerQueue
        return try await onQueue(queue) { () throws(Failure) -> T in try Self.transaction(connection, body) }
    }

    private static func transaction<T, Failure: SQLiteEngineFailure>(
        _ connection: SQLiteConnection, _ body: (SQLiteConnection) throws(Failure) -> T
    ) throws(Failure) -> T {
        do throws(SQLiteStoreError) { try connection.execute("BEGIN") } catch { throw Failure(engine: error) }
        defer { try? connection.execute("COMMIT") }
        return try body(connection)
    }

    /// A read on a read-only database. An immutable connection is trusted only while the file is as it
    /// was when it opened and no writer has appeared (no `-wal`), checked before and after the read;
    /// otherwise the connection becomes an ordinary read-only one (which follows the writer's log) and
    /// the read runs again there.
    private func readChecked<T, Failure: SQLiteEngineFailure>(_ body: (SQLiteConnection) throws(Failure) -> T) throws(Failure) -> T {
        let file = SQLiteDatabaseFile(path: path)
        guard let (connection, immutableSince) = readOnlyReader?.withLock({ ($0.connection, $0.immutableSince) }) else {
            throw Failure(engine: SQLiteStoreError(code: .failure, message: "the database has no read-only connection"))
        }
        if let immutableSince, !file.hasWriteAheadLog, file.identity() == immutableSince {
            let value = try Self.transaction(connection, body)
            if !file.hasWriteAheadLog, file.identity() == immutableSince { return value }
        } else if immutableSince == nil {
            return try Self.transaction(connection, body)
        }
        let ordinary: SQLiteConnection
        do throws(SQLiteStoreError) { ordinary = try Self.readOnlyConnection(path, immutable: false) } catch { throw Failure(engine: error) }
        readOnlyReader?.withLock { $0 = ReadOnlyReader(connection: ordinary, immutableSince: nil) }
        return try Self.transaction(ordinary, body)
    }

    /// Runs `body` on the writer queue outside any transaction (schema checks, checkpoints); on a
    /// read-only database, on the reader queue.
    /// - Throws: `body`'s error, or the engine's own failure as a `Failure`.
    func withConnection<T: Sendable, Failure: SQLiteEngineFailure>(
        _ body: @escaping @Sendable (SQLiteConnection) throws(Failure) -> T
    ) throws(Failure) -> T {
        let connection: SQLiteConnection
        let queue: DispatchQueue
        if let writer {
            connection = writer
            queue = writerQueue
        } else if let reader = readOnlyReader?.withLock({ $0.connection }) {
            connection = reader
            queue = readerQueue
        } else {
            throw Failure(engine: SQLiteStoreError(code: .failure, message: "the database has no connection"))
        }
        let outcome: Result<T, Failure> = queue.sync {
            do throws(Failure) {
                return .success(try body(connection))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    private func requireWriter() throws(SQLiteStoreError) -> SQLiteConnection {
        guard let writer else {
            throw SQLiteStoreError(code: .writeRefused, message: "\(path) was opened read-only; nothing was written")
        }
        return writer
    }

    private func onQueue<T: Sendable, Failure: SQLiteEngineFailure>(
        _ queue: DispatchQueue, _ body: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        // Once the body has run, `perform`'s queue holds nothing of it (nor of the connection it holds),
        // so a store released right after its last call closes its connections then, and SQLite
        // removes the WAL.
        try await queue.perform(body)
    }
}

/// The error a store's transactions throw, which the engine also uses for its own failures (a refused
/// write, a failed `BEGIN` or `COMMIT`), keeping them as the cause.
protocol SQLiteEngineFailure: Error, Sendable {
    /// The store's error for a failure of the engine itself.
    init(engine: SQLiteStoreError)
}

extension SQLiteStoreError: SQLiteEngineFailure {
    /// The engine's failure, as is.
    init(engine: SQLiteStoreError) { self = engine }
}
