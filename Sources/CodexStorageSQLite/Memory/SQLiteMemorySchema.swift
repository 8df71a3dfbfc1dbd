import CodexCore
import Foundation

/// The memory store's own schema: named, ordered, forward-only migrations recorded in
/// `memory_migrations` (a file of its own, never the runtime state store's).
enum SQLiteMemorySchema {
    /// One migration: its position (1-based), a stable name, its SQL, and whether the full-text index is
    /// rebuilt from the records after it (when the index's text form changed).
    struct Migration {
        let position: Int
        let name: String
        let sql: String
        var rebuildsIndex = false
    }

    static let all: [Migration] = [
        Migration(position: 1, name: "create_memory_records_tags_fts", sql: """
            CREATE TABLE memory_records (
                key INTEGER PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                namespace TEXT NOT NULL,
                scope TEXT NOT NULL,
                category TEXT NOT NULL,
                importance INTEGER NOT NULL,
                dedupe_key TEXT,
                expires_at REAL,
                archived INTEGER NOT NULL,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                summary_characters INTEGER NOT NULL,
                body BLOB NOT NULL
            );
            CREATE UNIQUE INDEX memory_records_by_dedupe_key ON memory_records(namespace, dedupe_key) WHERE dedupe_key IS NOT NULL;
            CREATE INDEX memory_records_by_update ON memory_records(namespace, updated_at DESC, id);
            CREATE INDEX memory_records_by_importance ON memory_records(namespace, importance DESC, updated_at DESC, id);
            CREATE TABLE memory_tags (
                tag TEXT NOT NULL,
                record INTEGER NOT NULL REFERENCES memory_records(key) ON DELETE CASCADE,
                PRIMARY KEY (tag, record)
            ) WITHOUT ROWID;
            CREATE INDEX memory_tags_by_record ON memory_tags(record);
            CREATE VIRTUAL TABLE memory_fts USING fts5(summary, evidence, tokenize = 'unicode61 remove_diacritics 0');
            """),
        // The record's importance as a token of a third full-text column (`importance0` … `importance10`),
        // so a search ranked by importance asks FTS5 for one level at a time and scores only that level's
        // matches with BM25, instead of scoring every match before the LIMIT.
        Migration(position: 2, name: "index_importance_in_fts", sql: """
            ALTER TABLE memory_fts RENAME TO memory_fts_without_importance;
            CREATE VIRTUAL TABLE memory_fts USING fts5(summary, evidence, level, tokenize = 'unicode61 remove_diacritics 0');
            INSERT INTO memory_fts(rowid, summary, evidence, level)
                SELECT f.rowid, f.summary, f.evidence, 'importance' || r.importance
                FROM memory_fts_without_importance f JOIN memory_records r ON r.key = f.rowid;
            DROP TABLE memory_fts_without_importance;
            """),
        // The index holds each record's normalized tokens (MemoryText.indexText), the form queries are
        // made of, instead of the raw text: FTS5's unicode61 folding and Swift's differ (`İ` is kept by
        // one and lowercased to `i` + U+0307 by the other), so a record stored as `İstanbul` was found by
        // no spelling of its name.
        Migration(position: 3, name: "index_normalized_tokens", sql: "", rebuildsIndex: true),
    ]

    /// The token of the full-text `level` column for a record of `importance`.
    static func levelToken(_ importance: Int) -> String { "importance\(importance)" }

    /// The tables a store must have, and the module of the virtual one.
    static let requiredTables = ["memory_migrations", "memory_records", "memory_tags", "memory_fts"]

    /// What a database file holds, as far as the memory store is concerned.
    enum Ownership: Equatable {
        /// No tables: a new database the store may adopt.
        case empty
        /// A memory store: `memory_migrations` with what it records.
        case ours(applied: [Int: String])
        /// Tables of its own and no `memory_migrations`.
        case foreign
    }

    /// Fails unless this SQLite can create an FTS5 table (probed with a temporary one).
    static func probeFullText(_ connection: SQLiteConnection, module: String) throws(MemoryStoreError) {
        do throws(SQLiteStoreError) {
            try connection.execute("CREATE VIRTUAL TABLE temp.memory_fts_probe USING \(module)(x); DROP TABLE temp.memory_fts_probe")
        } catch {
            throw MemoryStoreError(
                code: .fullTextUnavailable,
                message: "this SQLite (\(SQLiteConnection.libraryVersion)) has no FTS5 full-text module; the memory store needs it",
                underlying: error
            )
        }
    }

    /// Reads (never writes) what the database holds.
    static func ownership(_ connection: SQLiteConnection) throws(SQLiteStoreError) -> Ownership {
        let tables = try tableNames(connection)
        if tables.isEmpty { return .empty }
        guard tables.contains("memory_migrations") else { return .foreign }
        var applied: [Int: String] = [:]
        try connection.run("SELECT position, name FROM memory_migrations ORDER BY position") { row throws(SQLiteStoreError) in
            applied[Int(row.integer(0))] = row.text(1) ?? ""
        }
        return .ours(applied: applied)
    }

    static func tableNames(_ connection: SQLiteConnection) throws(SQLiteStoreError) -> Set<String> {
        var tables = Set<String>()
        try connection.run("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'") { row throws(SQLiteStoreError) in
            tables.insert(row.text(0) ?? "")
        }
        return tables
    }

    /// Checks that every recorded migration is one this build knows, under its name.
    static func checkKnown(_ applied: [Int: String], path: String) throws(MemoryStoreError) {
        for (position, name) in applied.sorted(by: { $0.key < $1.key }) {
            guard let known = all.first(where: { $0.position == position }) else {
                throw MemoryStoreError(code: .schemaTooNew, message: "\(path) records memory migration \(position) (\(name)), which this build does not know")
            }
            guard known.name == name else {
                throw MemoryStoreError(code: .foreignDatabase, message: "\(path) records migration \(position) as \(name): not a CodexKit memory store")
            }
        }
    }

    /// Checks that the tables the migrations create are all there (the full-text table included).
    static func checkTables(_ connection: SQLiteConnection, path: String) throws(MemoryStoreError) {
        let tables: Set<String>
        do throws(SQLiteStoreError) { tables = try tableNames(connection) } catch { throw MemoryStoreError(error) }
        for table in requiredTables where !tables.contains(table) {
            throw MemoryStoreError(code: .corrupt, message: "\(path) is a memory store without its \(table) table")
        }
    }

    /// Adopts a new database or upgrades one of ours in one transaction; a refusal or a failure leaves
    /// the file as it was.
    static func migrate(_ connection: SQLiteConnection, path: String, now: Date = Date()) throws(MemoryStoreError) {
        do throws(SQLiteStoreError) {
            try connection.execute("BEGIN IMMEDIATE")
        } catch {
            throw MemoryStoreError(error)
        }
        do throws(MemoryStoreError) {
            var applied: [Int: String] = [:]
            let owned: Ownership
            do throws(SQLiteStoreError) { owned = try ownership(connection) } catch { throw MemoryStoreError(error) }
            switch owned {
            case .foreign:
                throw MemoryStoreError(code: .foreignDatabase, message: "\(path) is a SQLite database of something else (it has tables and no memory_migrations); it was left unchanged")
            case .ours(let recorded):
                applied = recorded
                try checkKnown(recorded, path: path)
            case .empty:
                do throws(SQLiteStoreError) {
                    try connection.execute("CREATE TABLE memory_migrations (position INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL UNIQUE, applied_at REAL NOT NULL)")
                } catch { throw MemoryStoreError(error) }
            }
            for migration in all where applied[migration.position] == nil {
                do throws(SQLiteStoreError) {
                    if !migration.sql.isEmpty { try connection.execute(migration.sql) }
                } catch { throw MemoryStoreError(error) }
                if migration.rebuildsIndex {
                    do { try SQLiteMemoryRows.reindexAll(connection) } catch { throw MemoryStoreError.from(error) }
                }
                do throws(SQLiteStoreError) {
                    try connection.run(
                        "INSERT INTO memory_migrations(position, name, applied_at) VALUES (?, ?, ?)",
                        [.integer(Int64(migration.position)), .text(migration.name), .real(now.timeIntervalSince1970)]
                    )
                } catch { throw MemoryStoreError(error) }
            }
            try checkTables(connection, path: path)
            do throws(SQLiteStoreError) { try connection.execute("COMMIT") } catch { throw MemoryStoreError(error) }
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// Refuses, for reading, what is not a memory store at the migrations this build knows.
    static func checkReadable(_ connection: SQLiteConnection, path: String) throws(MemoryStoreError) {
        let owned: Ownership
        do throws(SQLiteStoreError) { owned = try ownership(connection) } catch { throw MemoryStoreError(error) }
        switch owned {
        case .empty:
            throw MemoryStoreError(code: .notFound, message: "\(path) is a SQLite database without tables: no memory store was ever written to it")
        case .foreign:
            throw MemoryStoreError(code: .foreignDatabase, message: "\(path) is a SQLite database of something else (it has tables and no memory_migrations)")
        case .ours(let applied):
            try checkKnown(applied, path: path)
            if let missing = all.first(where: { applied[$0.position] == nil }) {
                throw MemoryStoreError(
                    code: .schemaOutdated, message: "\(path) needs memory migration \(missing.position) (\(missing.name)); open it for writing once to apply it"
                )
            }
            try checkTables(connection, path: path)
        }
    }
}

extension MemoryStoreError {
    /// The memory store's error for a SQLite failure, keeping it as the cause.
    init(_ error: SQLiteStoreError) {
        let code: Code = switch error.code {
        case .notFound: .notFound
        case .corrupt: .corrupt
        case .foreignDatabase: .foreignDatabase
        case .schemaTooNew: .schemaTooNew
        case .schemaOutdated: .schemaOutdated
        case .writeRefused: .writeRefused
        case .rowUndecodable: .recordUndecodable
        default: .storageFailure
        }
        self.init(code: code, message: error.message, underlying: error)
    }

    /// Any error of the SQLite memory store's internals as a ``MemoryStoreError``.
    static func from(_ error: any Error) -> MemoryStoreError {
        switch error {
        case let error as MemoryStoreError: error
        case let error as SQLiteStoreError: MemoryStoreError(error)
        default: MemoryStoreError(code: .storageFailure, message: "an unexpected \(String(describing: type(of: error))) error")
        }
    }
}
