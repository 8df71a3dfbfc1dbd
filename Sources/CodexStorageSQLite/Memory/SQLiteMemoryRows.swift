import CodexCore
import Foundation

/// How a record becomes a `memory_records` row, its tags and its full-text row, and back.
enum SQLiteMemoryRows {
    /// The record's JSON body (dates as seconds since 2001-01-01, exact).
    static func body(_ record: MemoryRecord) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return Array(try encoder.encode(record))
        } catch {
            throw MemoryStoreError(code: .storageFailure, message: "a record could not be encoded")
        }
    }

    /// Decodes a body and checks it against its row's ID.
    static func record(_ body: [UInt8], id: String) throws -> MemoryRecord {
        guard let record = try? StoredDate.decoder().decode(MemoryRecord.self, from: Data(body)), record.id.rawValue == id else {
            throw MemoryStoreError(
                code: .recordUndecodable, message: "the stored record \(id) cannot be decoded or names another ID",
                underlying: SQLiteStoreError(code: .rowUndecodable, message: "undecodable memory record", table: "memory_records", rowKey: id)
            )
        }
        return record
    }

    /// The key and record with `id`, if any.
    static func find(_ connection: SQLiteConnection, id: MemoryRecordID) throws -> (Int64, MemoryRecord)? {
        var found: (Int64, [UInt8])?
        try connection.run("SELECT key, body FROM memory_records WHERE id = ?", [.text(id.rawValue)]) { row throws(SQLiteStoreError) in
            found = (row.integer(0), row.blob(1))
        }
        guard let found else { return nil }
        return (found.0, try record(found.1, id: id.rawValue))
    }

    /// The key and record of `namespace` with `dedupeKey`, if any.
    static func find(_ connection: SQLiteConnection, namespace: MemoryNamespace, dedupeKey: String) throws -> (Int64, MemoryRecord)? {
        var found: (Int64, String, [UInt8])?
        try connection.run(
            "SELECT key, id, body FROM memory_records WHERE namespace = ? AND dedupe_key = ?", [.text(namespace.rawValue), .text(dedupeKey)]
        ) { row throws(SQLiteStoreError) in
            found = (row.integer(0), row.text(1) ?? "", row.blob(2))
        }
        guard let found else { return nil }
        return (found.0, try record(found.2, id: found.1))
    }

    /// The column values of `record`, in `columns` order.
    static func values(_ record: MemoryRecord) throws -> [SQLiteValue] {
        [
            .text(record.id.rawValue), .text(record.namespace.rawValue), .text(record.scope.rawValue), .text(record.category.rawValue),
            .integer(Int64(record.importance)), record.dedupeKey.map { .text($0) } ?? .null,
            record.expiresAt.map { .real($0.timeIntervalSinceReferenceDate) } ?? .null, .integer(record.isArchived ? 1 : 0),
            .real(record.createdAt.timeIntervalSinceReferenceDate), .real(record.updatedAt.timeIntervalSinceReferenceDate),
            .integer(Int64(record.summary.count)), .blob(try body(record)),
        ]
    }

    static let columns = "id, namespace, scope, category, importance, dedupe_key, expires_at, archived, created_at, updated_at, summary_characters, body"

    /// Inserts `record`; returns its key.
    static func insert(_ connection: SQLiteConnection, _ record: MemoryRecord) throws -> Int64 {
        var key: Int64?
        try connection.run(
            "INSERT INTO memory_records(\(columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING key", try values(record)
        ) { row throws(SQLiteStoreError) in key = row.integer(0) }
        guard let key else { throw MemoryStoreError(code: .storageFailure, message: "an insert returned no key") }
        try index(connection, record, key: key)
        return key
    }

    /// Replaces the row at `key` with `record`.
    static func update(_ connection: SQLiteConnection, _ record: MemoryRecord, key: Int64) throws {
        try connection.run(
            "UPDATE memory_records SET (\(columns)) = (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) WHERE key = ?", try values(record) + [.integer(key)]
        )
        try unindex(connection, key: key)
        try index(connection, record, key: key)
    }

    /// Deletes the row at `key` with its tags and full-text row.
    static func delete(_ connection: SQLiteConnection, key: Int64) throws {
        try unindex(connection, key: key)
        try connection.run("DELETE FROM memory_records WHERE key = ?", [.integer(key)])
    }

    private static func index(_ connection: SQLiteConnection, _ record: MemoryRecord, key: Int64) throws {
        try indexText(connection, record, key: key)
        for tag in record.tags {
            try connection.run("INSERT INTO memory_tags(tag, record) VALUES (?, ?)", [.text(tag), .integer(key)])
        }
    }

    /// Rebuilds the full-text index from the records (after the index's text form changed).
    static func reindexAll(_ connection: SQLiteConnection) throws {
        try connection.execute("DELETE FROM memory_fts")
        var rows: [(Int64, String, [UInt8])] = []
        try connection.run("SELECT key, id, body FROM memory_records ORDER BY key") { row throws(SQLiteStoreError) in
            rows.append((row.integer(0), row.text(1) ?? "", row.blob(2)))
        }
        for (key, id, body) in rows { try indexText(connection, try record(body, id: id), key: key) }
    }

    /// The record's full-text row: its summary and evidence in the index's text form
    /// (``CodexCore/MemoryText/indexText(_:)``, the form queries are made in), and its importance token.
    private static func indexText(_ connection: SQLiteConnection, _ record: MemoryRecord, key: Int64) throws {
        try connection.run(
            "INSERT INTO memory_fts(rowid, summary, evidence, level) VALUES (?, ?, ?, ?)",
            [
                .integer(key), .text(MemoryText.indexText(record.summary)), .text(MemoryText.indexText(MemorySearchAssembly.evidenceText(of: record))),
                .text(SQLiteMemorySchema.levelToken(record.importance)),
            ]
        )
    }

    private static func unindex(_ connection: SQLiteConnection, key: Int64) throws {
        try connection.run("DELETE FROM memory_fts WHERE rowid = ?", [.integer(key)])
        try connection.run("DELETE FROM memory_tags WHERE record = ?", [.integer(key)])
    }
}
