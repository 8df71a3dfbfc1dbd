public import CodexCore
public import Foundation

/// A ``CodexCore/MemoryStoring`` store in a SQLite file of its own, searched through an FTS5 full-text
/// index ranked with BM25.
///
/// ```swift
/// let memory = try SQLiteMemoryStore(path: appSupport.appendingPathComponent("memory.sqlite").path)
/// try await memory.upsert(MemoryRecord(namespace: "shop", summary: "Prefers Tuesday delivery.", dedupeKey: "delivery-day"))
/// let result = try await memory.search(MemoryQuery(namespace: "shop", text: "delivery"))
/// ```
///
/// The file has its own schema (`memory_migrations`); it is never the runtime state store's file, and
/// each refuses the other's. WAL, `synchronous=FULL`, mode 0600; every write is one transaction.
public final class SQLiteMemoryStore: MemoryStoring {
    let database: SQLiteDatabase

    /// Opens (creating if missing, 0600) the store at `path`, or a private in-memory one for
    /// `":memory:"`, and applies pending migrations in one transaction.
    /// - Throws: ``CodexCore/MemoryStoreError``: `memory_fts5_unavailable` when this SQLite has no FTS5,
    ///   `memory_store_not_found` for a missing directory, `memory_store_foreign` for another
    ///   application's database (left unchanged), `memory_store_corrupt` for a file that is not a
    ///   database or a store missing a table, `memory_schema_too_new`.
    public convenience init(path: String) throws(MemoryStoreError) {
        try self.init(path: path, fullTextModule: "fts5")
    }

    /// Opens an existing store for reading only: nothing is created, migrated, switched to WAL or changed
    /// in mode, and every write throws `memory_write_refused` before touching anything. A cleanly closed
    /// store is read without creating SQLite's `-shm` and `-wal` files.
    /// - Throws: ``CodexCore/MemoryStoreError``: `memory_store_not_found` (nothing at the path, an empty
    ///   file or database), `memory_store_foreign`, `memory_schema_too_new`, `memory_schema_outdated`,
    ///   `memory_store_corrupt`, `memory_fts5_unavailable`.
    public convenience init(readingAt path: String) throws(MemoryStoreError) {
        try self.init(readingAt: path, fullTextModule: "fts5")
    }

    /// Opens for writing; `fullTextModule` is the module probed for before any file is touched (tests
    /// name a missing one).
    init(path: String, fullTextModule: String) throws(MemoryStoreError) {
        try SQLiteMemorySchema.probeFullText(fullTextModule)
        do throws(SQLiteStoreError) { database = try SQLiteDatabase(path: path, schema: SQLiteMemorySchema.schema) } catch { throw MemoryStoreError(error) }
    }

    /// Opens for reading; `fullTextModule` as in ``init(path:fullTextModule:)``.
    init(readingAt path: String, fullTextModule: String) throws(MemoryStoreError) {
        try SQLiteMemorySchema.probeFullText(fullTextModule)
        do throws(SQLiteStoreError) {
            database = try SQLiteDatabase(readingAt: path, schema: SQLiteMemorySchema.schema)
        } catch {
            throw MemoryStoreError(error)
        }
    }

    /// Whether the store was opened with ``init(readingAt:)`` and refuses writes.
    public var isReadOnly: Bool { database.isReadOnly }

    /// The number of memory migrations applied (the schema version).
    public var schemaVersion: Int {
        get throws(MemoryStoreError) {
            try database.withConnection { connection throws(MemoryStoreError) in
                do throws(SQLiteStoreError) { return try SQLiteMigrator.recorded(connection, SQLiteMemorySchema.schema).count } catch { throw MemoryStoreError(error) }
            }
        }
    }

    /// The number of migrations this build knows.
    public static var currentSchemaVersion: Int { SQLiteMemorySchema.schema.migrations.count }

    /// See ``CodexCore/MemoryStoring/upsert(_:)``: validated first; one transaction.
    @discardableResult
    public func upsert(_ record: MemoryRecord) async throws(MemoryStoreError) -> MemoryUpsertOutcome {
        try record.validate()
        return try await write { connection in
            let byID = try SQLiteMemoryRows.find(connection, id: record.id)
            let byKey = try record.dedupeKey.flatMap { key in try SQLiteMemoryRows.find(connection, namespace: record.namespace, dedupeKey: key) }
            if let byID, let byKey, byID.0 != byKey.0 {
                throw MemoryStoreError(code: .dedupeConflict, message: "the ID and the dedupe key name two different records")
            }
            guard let (key, previous) = byID ?? byKey else {
                _ = try SQLiteMemoryRows.insert(connection, record)
                return .inserted(record)
            }
            let stored = record.replacing(previous)
            try SQLiteMemoryRows.update(connection, stored, key: key)
            return .replaced(previous: previous, stored: stored)
        }
    }

    /// See ``CodexCore/MemoryStoring/record(_:)``.
    public func record(_ id: MemoryRecordID) async throws(MemoryStoreError) -> MemoryRecord? {
        try await read { connection in try SQLiteMemoryRows.find(connection, id: id)?.1 }
    }

    /// See ``CodexCore/MemoryStoring/delete(_:)``.
    @discardableResult
    public func delete(_ id: MemoryRecordID) async throws(MemoryStoreError) -> Bool {
        try await write { connection in
            var key: Int64?
            try connection.run("SELECT key FROM memory_records WHERE id = ?", [.text(id.rawValue)]) { row throws(SQLiteStoreError) in key = row.integer(0) }
            guard let key else { return false }
            try SQLiteMemoryRows.delete(connection, key: key)
            return true
        }
    }

    /// See ``CodexCore/MemoryStoring/archive(_:at:)``.
    @discardableResult
    public func archive(_ id: MemoryRecordID, at date: Date) async throws(MemoryStoreError) -> Bool {
        try await write { connection in
            guard let (key, record) = try SQLiteMemoryRows.find(connection, id: id) else { return false }
            try SQLiteMemoryRows.update(connection, record.archived(at: date), key: key)
            return true
        }
    }

    /// See ``CodexCore/MemoryStoring/list(_:)``.
    public func list(_ query: MemoryListQuery) async throws(MemoryStoreError) -> [MemoryRecord] {
        try query.validate()
        var filter = SQLiteMemoryFilter(namespace: query.namespace)
        filter.add(scopes: query.scopes, tags: query.tags, includeArchived: query.includeArchived, includeExpired: query.includeExpired, asOf: query.asOf)
        let sql = "SELECT r.id, r.body FROM memory_records r WHERE \(filter.sql) ORDER BY r.updated_at DESC, r.id LIMIT ?"
        let bindings = filter.bindings + [.integer(Int64(query.limit))]
        return try await read { connection in
            var rows: [(String, [UInt8])] = []
            try connection.run(sql, bindings) { row throws(SQLiteStoreError) in rows.append((row.text(0) ?? "", row.blob(1))) }
            return try rows.map { id, body in try SQLiteMemoryRows.record(body, id: id) }
        }
    }

    /// `PRAGMA integrity_check`: `["ok"]` for a healthy store.
    public func integrityCheck() async throws(MemoryStoreError) -> [String] {
        try await read { connection in
            var lines: [String] = []
            try connection.run("PRAGMA integrity_check") { row throws(SQLiteStoreError) in lines.append(row.text(0) ?? "") }
            return lines
        }
    }
}

extension SQLiteMemoryStore {
    /// One write transaction on the engine, any failure of the store's row code as a
    /// ``CodexCore/MemoryStoreError``.
    func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws(MemoryStoreError) -> T {
        try await database.write { connection throws(MemoryStoreError) in
            do { return try body(connection) } catch { throw MemoryStoreError.from(error) }
        }
    }

    /// One read transaction on the engine, failures as in ``write(_:)``.
    func read<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws(MemoryStoreError) -> T {
        try await database.read { connection throws(MemoryStoreError) in
            do { return try body(connection) } catch { throw MemoryStoreError.from(error) }
        }
    }
}

/// The `WHERE` clause of a list or search over `memory_records r`, with its bindings.
struct SQLiteMemoryFilter {
    private(set) var clauses: [String]
    private(set) var bindings: [SQLiteValue]

    init(namespace: MemoryNamespace) {
        clauses = ["r.namespace = ?"]
        bindings = [.text(namespace.rawValue)]
    }

    var sql: String { clauses.joined(separator: " AND ") }

    mutating func add(scopes: [MemoryScope], tags: [String], includeArchived: Bool, includeExpired: Bool, asOf: Date) {
        if !includeArchived { clauses.append("r.archived = 0") }
        if !includeExpired {
            clauses.append("(r.expires_at IS NULL OR r.expires_at > ?)")
            bindings.append(.real(asOf.timeIntervalSinceReferenceDate))
        }
        if !scopes.isEmpty {
            clauses.append("r.scope IN (\(Array(repeating: "?", count: scopes.count).joined(separator: ", ")))")
            bindings += scopes.map { .text($0.rawValue) }
        }
        if !tags.isEmpty {
            clauses.append("EXISTS (SELECT 1 FROM memory_tags t WHERE t.record = r.key AND t.tag IN (\(Array(repeating: "?", count: tags.count).joined(separator: ", "))))")
            bindings += tags.map { .text($0) }
        }
    }

    mutating func add(_ clause: String, _ values: [SQLiteValue] = []) {
        clauses.append(clause)
        bindings += values
    }
}
