import CodexCore
import Foundation

/// The memory store's own schema: named, ordered, forward-only migrations recorded in
/// `memory_migrations` (a file of its own, never the runtime state store's), applied by
/// ``SQLiteMigrator``.
enum SQLiteMemorySchema {
    static let schema = SQLiteSchema(
        kind: "memory store",
        migrationNoun: "memory migration",
        migrationTable: "memory_migrations",
        migrations: migrations,
        requiredTables: ["memory_migrations", "memory_records", "memory_tags", "memory_fts"]
    )

    private static let migrations: [SQLiteSchema.Migration] = [
        SQLiteSchema.Migration(position: 1, name: "create_memory_records_tags_fts", sql: """
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
        SQLiteSchema.Migration(position: 2, name: "index_importance_in_fts", sql: """
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
        SQLiteSchema.Migration(position: 3, name: "index_normalized_tokens", sql: "") { connection throws(SQLiteStoreError) in
            do { try SQLiteMemoryRows.reindexAll(connection) } catch { throw SQLiteStoreError(memory: error) }
        },
    ]

    /// The token of the full-text `level` column for a record of `importance`.
    static func levelToken(_ importance: Int) -> String { "importance\(importance)" }

    /// Fails, before any file is touched, unless this SQLite can create a full-text table of `module`
    /// (probed with a temporary one on a private in-memory database).
    static func probeFullText(_ module: String) throws(MemoryStoreError) {
        do throws(SQLiteStoreError) {
            let probe = try SQLiteConnection(path: ":memory:", mode: .readWrite)
            try probe.execute("CREATE VIRTUAL TABLE temp.memory_fts_probe USING \(module)(x); DROP TABLE temp.memory_fts_probe")
        } catch {
            throw MemoryStoreError(
                code: .fullTextUnavailable,
                message: "this SQLite (\(SQLiteConnection.libraryVersion)) has no FTS5 full-text module; the memory store needs it",
                underlying: error
            )
        }
    }
}

extension MemoryStoreError: SQLiteEngineFailure {
    /// The memory store's error for a failure of the SQLite engine, keeping it as the cause.
    init(engine: SQLiteStoreError) { self.init(engine) }

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

extension SQLiteStoreError {
    /// A memory-store failure inside a migration step, as the engine's error: a record that cannot be
    /// decoded stays `sqlite_row_undecodable` with its message, so the memory store reports it as
    /// `memory_record_undecodable` again.
    init(memory error: any Error) {
        switch error {
        case let error as SQLiteStoreError:
            self = error
        case let error as MemoryStoreError:
            let cause = error.underlying as? SQLiteStoreError
            self.init(
                code: error.code == .recordUndecodable ? .rowUndecodable : .failure, message: error.message, table: cause?.table, rowKey: cause?.rowKey
            )
        default:
            self.init(code: .failure, message: "an unexpected \(String(describing: type(of: error))) error")
        }
    }
}
