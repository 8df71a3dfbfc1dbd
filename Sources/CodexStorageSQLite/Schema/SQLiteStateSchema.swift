import Foundation

/// The runtime state store's schema: named, ordered, forward-only migrations recorded in
/// `codex_migrations`, applied by ``SQLiteMigrator``.
enum SQLiteStateSchema {
    static let schema = SQLiteSchema(
        kind: "state store",
        migrationNoun: "migration",
        migrationTable: "codex_migrations",
        migrations: migrations,
        // A store whose migrations are recorded but a table is gone is damaged: refused when it is opened
        // for writing (naming the table); a reader's statement that needs it names it too.
        requiredTables: expectedColumns.map(\.table),
        checksTablesOnRead: false,
        companionDirectorySuffixes: [".attachments", ".owners"],
        migrateHint: "open it for writing once (codexctl db migrate) to apply it"
    )

    private static let migrations: [SQLiteSchema.Migration] = [
        SQLiteSchema.Migration(position: 1, name: "create_threads_history_turns", sql: """
            CREATE TABLE threads (
                id TEXT PRIMARY KEY NOT NULL,
                updated_at REAL NOT NULL,
                body BLOB NOT NULL
            );
            CREATE INDEX threads_by_update ON threads(updated_at DESC, id);
            CREATE TABLE history_items (
                thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
                position INTEGER NOT NULL,
                kind TEXT NOT NULL,
                body BLOB NOT NULL,
                PRIMARY KEY (thread_id, position)
            ) WITHOUT ROWID;
            CREATE TABLE turns (
                id TEXT PRIMARY KEY NOT NULL,
                thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
                started_at REAL NOT NULL,
                body BLOB NOT NULL
            );
            CREATE INDEX turns_by_thread ON turns(thread_id, started_at);
            """),
        SQLiteSchema.Migration(position: 2, name: "create_history_images", sql: """
            CREATE TABLE history_images (
                thread_id TEXT NOT NULL,
                position INTEGER NOT NULL,
                ordinal INTEGER NOT NULL,
                attachment_id TEXT NOT NULL,
                mime_type TEXT NOT NULL,
                storage_key TEXT NOT NULL,
                metadata BLOB,
                PRIMARY KEY (thread_id, position, ordinal),
                FOREIGN KEY (thread_id, position) REFERENCES history_items(thread_id, position) ON DELETE CASCADE
            ) WITHOUT ROWID;
            CREATE INDEX history_images_by_key ON history_images(storage_key);
            """),
        // Durable turns: each turn's journal of steps, and the approvals turns asked for.
        SQLiteSchema.Migration(position: 3, name: "create_turn_journal_and_approvals", sql: """
            CREATE TABLE turn_journal (
                turn_id TEXT NOT NULL,
                sequence INTEGER NOT NULL,
                thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
                body BLOB NOT NULL,
                PRIMARY KEY (turn_id, sequence)
            ) WITHOUT ROWID;
            CREATE INDEX turn_journal_by_thread ON turn_journal(thread_id);
            CREATE TABLE approvals (
                id TEXT PRIMARY KEY NOT NULL,
                thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
                requested_at REAL NOT NULL,
                body BLOB NOT NULL
            );
            CREATE INDEX approvals_by_thread ON approvals(thread_id, requested_at);
            """),
        // The usage ledger: one row per model response, by turn and request number; the key columns
        // repeat what the body holds, for the filters.
        SQLiteSchema.Migration(position: 4, name: "create_usage_records", sql: """
            CREATE TABLE usage_records (
                turn_id TEXT NOT NULL,
                sequence INTEGER NOT NULL,
                thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
                account_binding TEXT,
                model TEXT NOT NULL,
                recorded_at REAL NOT NULL,
                body BLOB NOT NULL,
                PRIMARY KEY (turn_id, sequence)
            ) WITHOUT ROWID;
            CREATE INDEX usage_records_by_thread ON usage_records(thread_id, recorded_at);
            CREATE INDEX usage_records_by_time ON usage_records(recorded_at);
            """),
    ]

    /// The tables and columns the migrations create, in column order: what a deep check expects.
    static let expectedColumns: [(table: String, columns: [String])] = [
        ("codex_migrations", ["position", "name", "applied_at"]),
        ("threads", ["id", "updated_at", "body"]),
        ("history_items", ["thread_id", "position", "kind", "body"]),
        ("turns", ["id", "thread_id", "started_at", "body"]),
        ("history_images", ["thread_id", "position", "ordinal", "attachment_id", "mime_type", "storage_key", "metadata"]),
        ("turn_journal", ["turn_id", "sequence", "thread_id", "body"]),
        ("approvals", ["id", "thread_id", "requested_at", "body"]),
        ("usage_records", ["turn_id", "sequence", "thread_id", "account_binding", "model", "recorded_at", "body"]),
    ]
}
