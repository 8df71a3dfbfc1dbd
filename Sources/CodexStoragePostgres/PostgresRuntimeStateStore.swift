public import CodexCore
import Foundation
import Synchronization

/// A ``CodexCore/RuntimeStateStore`` on PostgreSQL, for hosts that run many replicas on one database:
/// threads, ordered paged history, turns and their owners, durable turns' journals and approvals, and
/// content-addressed image blobs, in the store's own PostgreSQL schema (default `codexkit`).
///
/// ```swift
/// let store = try await PostgresRuntimeStateStore(connectionString: "postgresql://app@db.internal/app?sslmode=verify-full")
/// let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: store))
/// ```
///
/// Every write is one transaction. Replicas starting at once migrate the schema once (an advisory lock).
/// Each runtime's owner lease is a session-level advisory lock on a connection of its own, so it ends
/// when its process dies or loses the server. When a connection breaks during a write, the store asks
/// the server whether the write was committed before it runs it again, so a write lands at most once;
/// when it cannot tell, the error is `storage_unavailable`. The connection string's password never
/// appears in an error.
public final class PostgresRuntimeStateStore: RuntimeStateStore, TurnJournaling, RuntimeOwnerLeasing {
    let database: PostgresDatabase
    /// The PostgreSQL schema the tables live in.
    public let schema: String
    let settings: PostgresConnectionSettings
    let leaseProbe: PostgresLeaseProbe

    /// The largest piece of an image blob one statement carries (1 MiB).
    static let blobChunkBytes = 1 << 20

    /// Connects to the database `connectionString` names (a `postgresql://` URL, libpq's `key=value`
    /// form, or empty for libpq's environment variables), creates the store's schema when it is
    /// missing and applies pending migrations.
    /// - Parameters:
    ///   - connectionString: Where the database is. Its password is kept out of every error.
    ///   - schema: The PostgreSQL schema of the store's tables (default `codexkit`).
    ///   - poolSize: The most connections the store opens at once (default 4; owner leases hold one more
    ///     each).
    ///   - applicationName: The `application_name` of its sessions, as `pg_stat_activity` shows them.
    /// - Throws: ``PostgresStoreError`` `storage_unavailable`, `postgres_authentication_failed`,
    ///   `postgres_invalid_connection_string`, `postgres_foreign_schema` (the schema holds another
    ///   application's tables; nothing is changed), `postgres_schema_too_new`.
    public init(connectionString: String, schema: String = "codexkit", poolSize: Int = 4, applicationName: String = "codexkit") async throws(PostgresStoreError) {
        settings = try PostgresConnectionSettings(connectionString: connectionString, schema: schema, readOnly: false, applicationName: applicationName)
        self.schema = schema
        leaseProbe = PostgresLeaseProbe(settings: settings)
        database = PostgresDatabase(pool: PostgresPool(settings: settings, size: poolSize), readOnly: false)
        try await database.pool.withConnection { connection throws(PostgresStoreError) in
            try PostgresMigrator.migrate(connection, schema: schema)
        }
    }

    /// Connects for inspection only: every connection is read-only on the server's side
    /// (`default_transaction_read_only`), nothing is created or migrated, and every write method throws
    /// `postgres_write_refused` before it reaches the server.
    /// - Throws: ``PostgresStoreError`` `postgres_schema_outdated` (no store yet, or migrations pending),
    ///   `postgres_schema_too_new`, `postgres_foreign_schema`, and the connection errors.
    public init(readingFrom connectionString: String, schema: String = "codexkit") async throws(PostgresStoreError) {
        settings = try PostgresConnectionSettings(connectionString: connectionString, schema: schema, readOnly: true)
        self.schema = schema
        leaseProbe = PostgresLeaseProbe(settings: settings)
        database = PostgresDatabase(pool: PostgresPool(settings: settings, size: 1), readOnly: true)
        try await database.pool.withConnection { connection throws(PostgresStoreError) in
            try PostgresMigrator.check(connection, schema: schema)
        }
    }

    /// Whether the store was opened with ``init(readingFrom:schema:)`` and refuses writes.
    public var isReadOnly: Bool { database.readOnly }

    /// Whether `text` names a PostgreSQL database rather than a file: a `postgres://` or
    /// `postgresql://` URL.
    public static func isConnectionURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://")
    }

    /// The number of migrations applied (the schema version).
    public func schemaVersion() async throws -> Int {
        try await database.read { connection throws(PostgresStoreError) in try PostgresMigrator.recorded(connection, schema: self.schema).count }
    }

    /// The server's version number (150018 for 15.18).
    public func serverVersion() async throws -> Int {
        try await database.pool.withConnection { connection throws(PostgresStoreError) in connection.serverVersion }
    }

    /// Test hook: the next `count` write commits lose their reply (they commit; the store is told the
    /// connection broke), so a test can see the store ask whether the write landed.
    package func loseCommitReplies(_ count: Int) { database.lostCommitReplies.withLock { $0 = count } }

    /// Closes the idle connections (the store stays usable; connections are opened again on demand).
    public func closeIdleConnections() { database.pool.close() }

    // MARK: - Owner leases

    /// Takes a new owner lease: a session-level advisory lock on a connection of its own (blocking
    /// while it connects), which the server releases when the process dies or the connection drops.
    /// - Returns: The lease, or `nil` for a read-only store.
    public func acquireOwnerLease() throws -> (any RuntimeOwnerLease)? {
        guard !isReadOnly else { return nil }
        return try PostgresOwnerLease(settings: settings)
    }

    /// Whether a live session holds `ownerID`'s lock (`false` for an owner this database never saw).
    public func isOwnerLeaseHeld(_ ownerID: String) throws -> Bool { try leaseProbe.isHeld(ownerID) }

    // MARK: - Threads

    /// All threads, most recently updated first.
    public func threads() async throws -> [AgentThread] {
        try await database.read { connection throws(PostgresStoreError) in
            var threads: [AgentThread] = []
            try connection.run("SELECT id, body FROM threads ORDER BY updated_at DESC, id") { row throws(PostgresStoreError) in
                threads.append(try Self.decodeThread(key: row.text(0) ?? "", row.bytes(1)))
            }
            return threads
        }
    }

    /// One thread, or `nil`.
    public func thread(_ id: AgentThreadID) async throws -> AgentThread? {
        try await database.read { connection throws(PostgresStoreError) in
            var thread: AgentThread?
            try connection.run("SELECT id, body FROM threads WHERE id = $1", [.text(id.rawValue)]) { row throws(PostgresStoreError) in
                thread = try Self.decodeThread(key: row.text(0) ?? "", row.bytes(1))
            }
            return thread
        }
    }

    /// Inserts or replaces a thread (its history and turns stay).
    public func upsertThread(_ thread: AgentThread) async throws {
        let body = try Self.encode(thread)
        try await database.write { connection throws(PostgresStoreError) in
            try connection.run(
                "INSERT INTO threads(id, updated_at, body) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, body = excluded.body",
                [.text(thread.id.rawValue), .double(thread.updatedAt.timeIntervalSince1970), .bytes(body)]
            )
        }
    }

    /// Deletes a thread with its history, turns, journals, approvals, usage records and the image blobs
    /// no other row refers to, in one transaction (nothing happens when it does not exist).
    public func deleteThread(_ id: AgentThreadID) async throws {
        try await database.write { connection throws(PostgresStoreError) in
            var keys: [String] = []
            try connection.run("SELECT DISTINCT storage_key FROM history_images WHERE thread_id = $1", [.text(id.rawValue)]) { row throws(PostgresStoreError) in
                keys.append(row.text(0) ?? "")
            }
            try connection.run("DELETE FROM threads WHERE id = $1", [.text(id.rawValue)])
            for key in keys { try Self.removeBlobIfUnreferenced(key, connection) }
        }
    }

    // MARK: - History

    /// Appends history items to a thread, in order, in one transaction.
    /// - Throws: ``PostgresStoreError`` `thread_not_found` when the thread does not exist.
    public func appendHistory(_ items: [AgentHistoryItem], to thread: AgentThreadID) async throws {
        let rows = try PostgresHistoryRows(items)
        do throws(PostgresStoreError) {
            try await database.write { connection throws(PostgresStoreError) in try rows.insert(into: thread, connection: connection) }
        } catch {
            throw error.missingThread
        }
    }

    /// One page of a thread's history; the cursor is the position of the last item returned.
    public func history(of thread: AgentThreadID, query: AgentHistoryQuery) async throws -> AgentHistoryPage {
        let limit = min(max(1, query.limit), 1 << 30)
        var cursor: Int64?
        if let text = query.cursor {
            guard let value = Int64(text), value >= 0 else {
                throw PostgresStoreError(code: .failure, message: "the history cursor is not one this store issued")
            }
            cursor = value
        }
        let forward = query.direction == .forward
        let start = cursor ?? (forward ? 0 : Int64.max)
        // One statement, one round trip: a page holds no image (the usual case) and one row more than
        // asked tells whether more follow. A page with images is read again in one snapshot with them.
        let plain = try await database.readStatement { connection throws(PostgresStoreError) in
            try Self.page(of: thread, from: start, forward: forward, limit: limit, images: false, connection)
        }
        if let plain { return plain }
        return try await database.read { connection throws(PostgresStoreError) -> AgentHistoryPage in
            try Self.page(of: thread, from: start, forward: forward, limit: limit, images: true, connection) ?? AgentHistoryPage(items: [], nextCursor: nil)
        }
    }

    /// One page of history after (or before) position `start`; `nil` when a row of the page has images
    /// and `images` is false (the caller reads the page again in a transaction with them).
    static func page(
        of thread: AgentThreadID, from start: Int64, forward: Bool, limit: Int, images: Bool, _ connection: PostgresConnection
    ) throws(PostgresStoreError) -> AgentHistoryPage? {
        // Whether any image lies beyond the cursor is asked once for the page (an uncorrelated subquery,
        // evaluated once), not once per row; a page that may hold one is read again in a transaction.
        let comparison = forward ? ">" : "<"
        let sql = """
            SELECT position, body, (SELECT EXISTS (SELECT 1 FROM history_images WHERE thread_id = $1 AND position \(comparison) $2))
            FROM history_items WHERE thread_id = $1 AND position \(comparison) $2 ORDER BY position \(forward ? "" : "DESC") LIMIT $3
            """
        var items: [AgentHistoryItem] = []
        var positions: [Int64] = []
        items.reserveCapacity(min(limit, 16_384))
        var more = false
        var withImages = false
        try connection.run(sql, [.text(thread.rawValue), .integer(start), .integer(Int64(min(limit, Int(Int32.max)) + 1))]) { row throws(PostgresStoreError) in
            guard items.count < limit else {
                more = true
                return
            }
            if row.bool(2) {
                withImages = true
                guard images else { return }
            }
            guard !withImages || images else { return }
            let position = row.integer(0)
            items.append(try row.withBytes(1) { body throws(PostgresStoreError) in
                try Self.decodeItem(body, thread: thread, key: "\(thread.rawValue)/\(position)")
            })
            positions.append(position)
        }
        if withImages && !images { return nil }
        if withImages, let low = positions.min(), let high = positions.max() {
            try Self.reattachImages(&items, positions: positions, range: low...high, thread: thread, connection)
        }
        return AgentHistoryPage(items: items, nextCursor: more ? positions.last.map(String.init) : nil)
    }

    /// Locks the thread's row for the rest of the transaction (writes to one thread take turns), or
    /// throws `thread_not_found`.
    static func lockThread(_ thread: AgentThreadID, _ connection: PostgresConnection) throws(PostgresStoreError) {
        var exists = false
        try connection.run("SELECT 1 FROM threads WHERE id = $1 FOR UPDATE", [.text(thread.rawValue)]) { _ throws(PostgresStoreError) in exists = true }
        guard exists else { throw PostgresStoreError(code: .threadNotFound, message: "no such thread") }
    }

    // MARK: - Encoding

    static func encode(_ value: some Encodable) throws(PostgresStoreError) -> [UInt8] {
        do {
            return Array(try StoredDate.encoder().encode(value))
        } catch EncodingError.invalidValue(let value, _) where value is Date {
            throw PostgresStoreError(code: .failure, message: StoredDate.refusal)
        } catch {
            throw PostgresStoreError(code: .failure, message: "a value could not be encoded")
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8], table: String? = nil, key: String? = nil) throws(PostgresStoreError) -> T {
        do {
            return try StoredDate.decoder().decode(T.self, from: Data(bytes))
        } catch {
            throw PostgresStoreError(code: .rowUndecodable, message: "a stored \(T.self) could not be decoded", table: table, rowKey: key)
        }
    }

    /// A thread row's body, checked against its key.
    static func decodeThread(key: String, _ body: [UInt8]) throws(PostgresStoreError) -> AgentThread {
        let thread = try decode(AgentThread.self, body, table: "threads", key: key)
        guard thread.id.rawValue == key else {
            throw PostgresStoreError(code: .rowUndecodable, message: "a thread row's body names another thread", table: "threads", rowKey: key)
        }
        return thread
    }

    /// A history row in the binary storage form (``CodexCore/AgentHistoryItem/storageRow()``).
    static func decodeItem(_ bytes: UnsafeBufferPointer<UInt8>, thread: AgentThreadID?, key: @autoclosure () -> String) throws(PostgresStoreError) -> AgentHistoryItem {
        do {
            return try AgentHistoryItem(storageRow: bytes, thread: thread)
        } catch {
            throw PostgresStoreError(code: .rowUndecodable, message: "a stored history item could not be decoded", table: "history_items", rowKey: key())
        }
    }
}
