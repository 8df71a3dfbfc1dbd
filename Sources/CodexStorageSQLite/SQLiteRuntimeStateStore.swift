public import CodexCore
import Foundation

/// A ``CodexCore/RuntimeStateStore`` in a real SQLite file (WAL, `synchronous=FULL`, foreign keys on):
/// threads, their history in order, and turns. Hosts can open the file with the `sqlite3` shell.
///
/// ```swift
/// let store = try SQLiteRuntimeStateStore(path: appSupport.appendingPathComponent("state.sqlite").path)
/// try await store.upsertThread(thread)
/// try await store.appendHistory([.message(reply)], to: thread.id)
/// let page = try await store.history(of: thread.id, query: .init(limit: 50))
/// ```
///
/// Every write is one transaction; a crash leaves either all of it or none. A file that is not a
/// database, is corrupt, or was written by a newer schema fails to open with a typed
/// ``SQLiteStoreError`` and is never recreated.
public final class SQLiteRuntimeStateStore: RuntimeStateStore {
    let database: SQLiteDatabase
    /// Image blobs (`<path>.attachments/`); `nil` for `:memory:`, which keeps images inside the rows.
    let attachments: SQLiteAttachmentFiles?

    /// Opens (creating if missing) the database at `path`, or a private in-memory one for `":memory:"`,
    /// and applies pending migrations.
    ///
    /// A missing file is created with mode 0600 (its `-wal` and `-shm` files follow that mode), and an
    /// existing store readable by others is tightened to 0600. An empty file is adopted. A file with
    /// tables of another application is refused with `sqlite_foreign_database` and left byte for byte
    /// as it was; the ownership check and every pending migration commit in one transaction, so a
    /// failed migration changes nothing either.
    /// - Throws: ``SQLiteStoreError`` (`sqlite_not_found` for a missing directory,
    ///   `sqlite_foreign_database`, `sqlite_corrupt`, `sqlite_schema_too_new`, `sqlite_open_failed`, …).
    public init(path: String) throws(SQLiteStoreError) {
        database = try SQLiteDatabase(path: path, schema: SQLiteStateSchema.schema)
        attachments = path == ":memory:" ? nil : SQLiteAttachmentFiles(directory: URL(fileURLWithPath: path + ".attachments"))
    }

    /// Opens an existing store for inspection only: the file is opened `SQLITE_OPEN_READONLY`, nothing
    /// is created, migrated, switched to WAL or changed in mode, and every write method throws
    /// `sqlite_write_refused` before touching anything.
    ///
    /// A cleanly closed store (no `-wal` file) is read without creating SQLite's `-shm` and `-wal` files;
    /// when a writer has it open, its log is read too, so the view is current.
    ///
    /// ```swift
    /// let store = try SQLiteRuntimeStateStore(readingAt: path)
    /// for thread in try await store.threads() { print(thread.id, thread.status) }
    /// ```
    /// - Throws: ``SQLiteStoreError`` `sqlite_not_found` (nothing at the path, an empty file, a missing
    ///   directory), `sqlite_foreign_database`, `sqlite_schema_too_new`, `sqlite_schema_outdated` (the
    ///   store needs a migration), `sqlite_corrupt`.
    public init(readingAt path: String) throws(SQLiteStoreError) {
        database = try SQLiteDatabase(readingAt: path, schema: SQLiteStateSchema.schema)
        attachments = SQLiteAttachmentFiles(directory: URL(fileURLWithPath: path + ".attachments"))
    }

    /// Whether the store was opened with ``init(readingAt:)`` and refuses writes.
    public var isReadOnly: Bool { database.isReadOnly }

    /// The number of migrations applied (the schema version).
    public var schemaVersion: Int {
        get throws(SQLiteStoreError) {
            try database.withConnection { connection throws(SQLiteStoreError) in try SQLiteMigrator.recorded(connection, SQLiteStateSchema.schema).count }
        }
    }

    /// The SQLite library's version number (e.g. 3040001 for 3.40.1).
    public static var sqliteVersion: Int { Int(SQLiteConnection.libraryVersion) }

    /// `PRAGMA integrity_check`: `["ok"]` for a healthy database.
    public func integrityCheck() async throws -> [String] {
        try await database.read { connection throws(SQLiteStoreError) in try SQLiteStoreChecker.integrity(connection) }
    }

    // MARK: - Threads

    /// All threads, most recently updated first.
    /// - Throws: ``SQLiteStoreError`` `sqlite_row_undecodable` naming the first row whose body cannot be
    ///   decoded or names another thread than its key.
    public func threads() async throws -> [AgentThread] {
        try await database.read { connection throws(SQLiteStoreError) in
            var threads: [AgentThread] = []
            try connection.run("SELECT id, body FROM threads ORDER BY updated_at DESC, id") { row throws(SQLiteStoreError) in
                threads.append(try Self.decodeThread(key: row.text(0) ?? "", row.blob(1)))
            }
            return threads
        }
    }

    /// One thread, or `nil`.
    /// - Throws: ``SQLiteStoreError`` `sqlite_row_undecodable` when its row cannot be decoded or its body
    ///   names another thread.
    public func thread(_ id: AgentThreadID) async throws -> AgentThread? {
        try await database.read { connection throws(SQLiteStoreError) in
            var thread: AgentThread?
            try connection.run("SELECT id, body FROM threads WHERE id = ?", [.text(id.rawValue)]) { row throws(SQLiteStoreError) in
                thread = try Self.decodeThread(key: row.text(0) ?? "", row.blob(1))
            }
            return thread
        }
    }

    /// A thread row's body, checked against its key.
    static func decodeThread(key: String, _ body: [UInt8]) throws(SQLiteStoreError) -> AgentThread {
        let thread = try decode(AgentThread.self, body, table: "threads", key: key)
        guard thread.id.rawValue == key else {
            throw SQLiteStoreError(code: .rowUndecodable, message: "a thread row's body names another thread", table: "threads", rowKey: key)
        }
        return thread
    }

    /// Inserts or replaces a thread (its history and turns stay).
    public func upsertThread(_ thread: AgentThread) async throws {
        let body = try Self.encode(thread)
        try await database.write { connection throws(SQLiteStoreError) in
            try connection.run(
                "INSERT INTO threads(id, updated_at, body) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at, body = excluded.body",
                [.text(thread.id.rawValue), .real(thread.updatedAt.timeIntervalSince1970), .blob(body)]
            )
        }
    }

    /// Deletes a thread with its history, turns, journals, approvals, usage records and the image blobs
    /// no other row refers to (nothing happens when it does not exist). Blobs are removed after the commit; a crash in between leaves
    /// orphans for ``sweepOrphanedAttachments()``, never a row without its blob.
    public func deleteThread(_ id: AgentThreadID) async throws {
        let unreferenced = try await database.write { connection throws(SQLiteStoreError) -> [String] in
            var keys: [String] = []
            try connection.run("SELECT DISTINCT storage_key FROM history_images WHERE thread_id = ?", [.text(id.rawValue)]) { row throws(SQLiteStoreError) in
                keys.append(row.text(0) ?? "")
            }
            try connection.run("DELETE FROM threads WHERE id = ?", [.text(id.rawValue)])
            var unreferenced: [String] = []
            for key in keys where try !Self.isReferenced(key, connection) { unreferenced.append(key) }
            return unreferenced
        }
        guard let attachments, !unreferenced.isEmpty else { return }
        // Unlink under the write lock, re-checking each key: another process may have committed a new
        // reference to the same bytes since (its blob write skipped the existing file).
        try await database.write { connection throws(SQLiteStoreError) in
            for key in unreferenced where try !Self.isReferenced(key, connection) { attachments.remove(key) }
        }
    }

    /// Removes image blobs that no row refers to (left by a crash between a thread's deletion and its
    /// blob cleanup), inside a write transaction so no append can be committing a reference meanwhile.
    /// - Returns: How many blobs were removed.
    @discardableResult
    public func sweepOrphanedAttachments() async throws -> Int {
        guard let attachments else { return 0 }
        return try await database.write { connection throws(SQLiteStoreError) -> Int in
            var removed = 0
            for key in attachments.keys() where try !Self.isReferenced(key, connection) {
                attachments.remove(key)
                removed += 1
            }
            return removed
        }
    }

    static func isReferenced(_ key: String, _ connection: SQLiteConnection) throws(SQLiteStoreError) -> Bool {
        var referenced = false
        try connection.run("SELECT 1 FROM history_images WHERE storage_key = ? LIMIT 1", [.text(key)]) { _ throws(SQLiteStoreError) in referenced = true }
        return referenced
    }

    // MARK: - History

    /// Appends history items to a thread, in order, in one transaction.
    /// - Throws: ``SQLiteStoreError`` `thread_not_found` when the thread does not exist.
    public func appendHistory(_ items: [AgentHistoryItem], to thread: AgentThreadID) async throws {
        let rows = try HistoryRows(items, externalizingImages: attachments != nil)
        let attachments = self.attachments
        try await database.write { connection throws(SQLiteStoreError) in
            try Self.requireThread(thread, connection: connection)
            try rows.insert(into: thread, connection: connection, attachments: attachments)
        }
    }

    /// One page of a thread's history; the cursor is the position of the last item returned.
    public func history(of thread: AgentThreadID, query: AgentHistoryQuery) async throws -> AgentHistoryPage {
        let limit = min(max(1, query.limit), 1 << 30)
        var cursor: Int64?
        if let text = query.cursor {
            guard let value = Int64(text), value >= 0 else {
                throw SQLiteStoreError(code: .failure, message: "the history cursor is not one this store issued")
            }
            cursor = value
        }
        let forward = query.direction == .forward
        // A position that is not a whole number would not compare as the cursor read from it (the next
        // page would start at the same row again): such a row is damage, not a page boundary.
        let sql = forward
            ? "SELECT position, body, typeof(position) = 'integer' FROM history_items WHERE thread_id = ? AND position > ? ORDER BY position LIMIT ?"
            : "SELECT position, body, typeof(position) = 'integer' FROM history_items WHERE thread_id = ? AND position < ? ORDER BY position DESC LIMIT ?"
        let start = cursor ?? (forward ? 0 : Int64.max)
        let attachments = self.attachments
        return try await database.read { connection throws(SQLiteStoreError) in
            var items: [AgentHistoryItem] = []
            var positions: [Int64] = []
            // Items are large values: grow in place rather than by repeated copies (bounded, for huge limits).
            items.reserveCapacity(min(limit, 16_384))
            positions.reserveCapacity(min(limit, 16_384))
            var last: Int64?
            try connection.run(sql, [.text(thread.rawValue), .integer(start), .integer(Int64(limit))]) { row throws(SQLiteStoreError) in
                guard items.count < limit else { return }
                guard row.integer(2) == 1 else {
                    throw SQLiteStoreError(
                        code: .rowUndecodable, message: "a history row's position is not a whole number", table: "history_items",
                        rowKey: "\(thread.rawValue)/\(row.text(0) ?? "")"
                    )
                }
                items.append(try row.withBlob(1) { body throws(SQLiteStoreError) in
                    try Self.decodeItem(body, thread: thread, key: "\(thread.rawValue)/\(row.integer(0))")
                })
                positions.append(row.integer(0))
                last = row.integer(0)
            }
            if let attachments, let low = positions.min(), let high = positions.max() {
                try Self.reattachImages(&items, positions: positions, range: low...high, thread: thread, attachments: attachments, connection)
            }
            var more = false
            if let last {
                let probe = forward
                    ? "SELECT 1 FROM history_items WHERE thread_id = ? AND position > ? LIMIT 1"
                    : "SELECT 1 FROM history_items WHERE thread_id = ? AND position < ? LIMIT 1"
                try connection.run(probe, [.text(thread.rawValue), .integer(last)]) { _ throws(SQLiteStoreError) in more = true }
            }
            return AgentHistoryPage(items: items, nextCursor: more ? last.map(String.init) : nil)
        }
    }

    // MARK: - Turns

    /// Inserts or replaces a turn record.
    /// - Throws: ``SQLiteStoreError`` `thread_not_found` when its thread does not exist (nothing written).
    public func upsertTurn(_ turn: AgentTurn) async throws {
        let body = try Self.encode(turn)
        try await database.write { connection throws(SQLiteStoreError) in
            try Self.requireThread(turn.threadID, connection: connection)
            try Self.upsertTurnRow(turn, body: body, connection: connection)
        }
    }

    /// Throws `thread_not_found` unless the thread exists (inside the caller's transaction).
    static func requireThread(_ thread: AgentThreadID, connection: SQLiteConnection) throws(SQLiteStoreError) {
        var exists = false
        try connection.run("SELECT 1 FROM threads WHERE id = ?", [.text(thread.rawValue)]) { _ throws(SQLiteStoreError) in exists = true }
        guard exists else { throw SQLiteStoreError(code: .threadNotFound, message: "no such thread") }
    }

    /// Inserts or replaces a turn's row (inside the caller's transaction).
    static func upsertTurnRow(_ turn: AgentTurn, body: [UInt8], connection: SQLiteConnection) throws(SQLiteStoreError) {
        try connection.run(
            "INSERT INTO turns(id, thread_id, started_at, body) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET started_at = excluded.started_at, body = excluded.body",
            [.text(turn.id.rawValue), .text(turn.threadID.rawValue), .real(turn.startedAt.timeIntervalSince1970), .blob(body)]
        )
    }

    /// The most recent turn of a thread, or `nil`.
    public func latestTurn(of thread: AgentThreadID) async throws -> AgentTurn? {
        try await database.read { connection throws(SQLiteStoreError) in
            var turn: AgentTurn?
            try connection.run(
                "SELECT body FROM turns WHERE thread_id = ? ORDER BY started_at DESC, rowid DESC LIMIT 1", [.text(thread.rawValue)]
            ) { row throws(SQLiteStoreError) in
                turn = try Self.decode(AgentTurn.self, row.blob(0), table: "turns")
            }
            return turn
        }
    }

    /// Puts back the images of the messages in `items` (at `positions`) from their blobs.
    static func reattachImages(
        _ items: inout [AgentHistoryItem], positions: [Int64], range: ClosedRange<Int64>, thread: AgentThreadID,
        attachments: SQLiteAttachmentFiles, _ connection: SQLiteConnection
    ) throws(SQLiteStoreError) {
        var images: [Int64: [AgentImageAttachment]] = [:]
        try connection.run(
            "SELECT position, attachment_id, mime_type, storage_key, metadata FROM history_images WHERE thread_id = ? AND position BETWEEN ? AND ? ORDER BY position, ordinal",
            [.text(thread.rawValue), .integer(range.lowerBound), .integer(range.upperBound)]
        ) { row throws(SQLiteStoreError) in
            let data = try attachments.load(row.text(3) ?? "")
            let metadata = row.isNull(4) ? nil : try decode(AgentImageAttachment.GenerationMetadata.self, row.blob(4))
            images[row.integer(0), default: []].append(AgentImageAttachment(
                id: AgentAttachmentID(rawValue: row.text(1) ?? ""), data: data, mimeType: row.text(2) ?? "", generationMetadata: metadata
            ))
        }
        guard !images.isEmpty else { return }
        for (index, position) in positions.enumerated() {
            if let found = images[position], case .message(var message) = items[index] {
                message.images = found
                items[index] = .message(message)
            }
        }
    }

    // MARK: - Encoding

    static func encode(_ value: some Encodable) throws(SQLiteStoreError) -> [UInt8] {
        do {
            return Array(try StoredDate.encoder().encode(value))
        } catch EncodingError.invalidValue(let value, _) where value is Date {
            throw SQLiteStoreError(code: .failure, message: StoredDate.refusal)
        } catch {
            throw SQLiteStoreError(code: .failure, message: "a value could not be encoded")
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8], table: String? = nil, key: String? = nil) throws(SQLiteStoreError) -> T {
        do {
            return try StoredDate.decoder().decode(T.self, from: Data(bytes))
        } catch {
            throw SQLiteStoreError(code: .rowUndecodable, message: "a stored \(T.self) could not be decoded", table: table, rowKey: key)
        }
    }

    /// A history row: the binary storage form (``CodexCore/AgentHistoryItem/storageRow()``), or the compact
    /// JSON form of rows written before it. Rows of `thread` share its identifier string.
    static func decodeItem(
        _ bytes: UnsafeBufferPointer<UInt8>, thread: AgentThreadID? = nil, key: @autoclosure () -> String? = nil
    ) throws(SQLiteStoreError) -> AgentHistoryItem {
        do {
            return try AgentHistoryItem(storageRow: bytes, thread: thread)
        } catch {
            throw SQLiteStoreError(code: .rowUndecodable, message: "a stored history item could not be decoded", table: "history_items", rowKey: key())
        }
    }
}
