import Foundation

/// The store's schema as named, ordered, forward-only migrations, recorded in `codex_migrations`.
enum SQLiteMigrations {
    /// One migration: its position (1-based), a stable name, and its SQL.
    struct Migration {
        let position: Int
        let name: String
        let sql: String
    }

    static let all: [Migration] = [
        Migration(position: 1, name: "create_threads_history_turns", sql: """
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
        Migration(position: 2, name: "create_history_images", sql: """
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
    ]

    /// Applies every migration not yet recorded, each in its own transaction; refuses a database that
    /// records migrations this build does not know (written by a newer schema).
    static func migrate(_ connection: SQLiteConnection, now: Date = Date()) throws(SQLiteStoreError) {
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS codex_migrations (
                position INTEGER PRIMARY KEY NOT NULL,
                name TEXT NOT NULL UNIQUE,
                applied_at REAL NOT NULL
            )
            """)
        let applied = try recorded(connection)
        for (position, name) in applied {
            guard let known = all.first(where: { $0.position == position }), known.name == name else {
                throw SQLiteStoreError(
                    code: .schemaTooNew,
                    message: "the database records migration \(position) (\(name)), which this build does not know; it was written by a newer version"
                )
            }
        }
        for migration in all where !applied.keys.contains(migration.position) {
            try connection.execute("BEGIN IMMEDIATE")
            do throws(SQLiteStoreError) {
                // Another process may have applied it since the first read (two first opens at once).
                if try recorded(connection)[migration.position] != nil {
                    try connection.execute("COMMIT")
                    continue
                }
                try connection.execute(migration.sql)
                try connection.run(
                    "INSERT INTO codex_migrations(position, name, applied_at) VALUES (?, ?, ?)",
                    [.integer(Int64(migration.position)), .text(migration.name), .real(now.timeIntervalSince1970)]
                )
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// The recorded migrations by position.
    static func recorded(_ connection: SQLiteConnection) throws(SQLiteStoreError) -> [Int: String] {
        var applied: [Int: String] = [:]
        try connection.run("SELECT position, name FROM codex_migrations ORDER BY position") { row throws(SQLiteStoreError) in
            applied[Int(row.integer(0))] = row.text(1) ?? ""
        }
        return applied
    }
}
