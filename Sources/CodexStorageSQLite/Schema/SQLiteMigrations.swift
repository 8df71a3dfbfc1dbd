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

    /// What a database file holds, as far as the store is concerned.
    enum Ownership: Equatable {
        /// No tables at all: a new (or empty) database the store may adopt.
        case empty
        /// A CodexKit state store: `codex_migrations` with what it records.
        case ours(applied: [Int: String])
        /// Tables of its own and no `codex_migrations`: another application's database.
        case foreign
    }

    /// Reads (never writes) what the database holds.
    static func ownership(_ connection: SQLiteConnection) throws(SQLiteStoreError) -> Ownership {
        var tables: [String] = []
        try connection.run("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'") { row throws(SQLiteStoreError) in
            tables.append(row.text(0) ?? "")
        }
        if tables.isEmpty { return .empty }
        guard tables.contains("codex_migrations") else { return .foreign }
        return .ours(applied: try recorded(connection))
    }

    /// Checks that every recorded migration is one this build knows.
    /// - Throws: `sqlite_schema_too_new` for a migration beyond this build's list,
    ///   `sqlite_foreign_database` for a known position recorded under another name.
    static func checkKnown(_ applied: [Int: String], path: String) throws(SQLiteStoreError) {
        for (position, name) in applied.sorted(by: { $0.key < $1.key }) {
            guard let known = all.first(where: { $0.position == position }) else {
                throw SQLiteStoreError(
                    code: .schemaTooNew,
                    message: "\(path) records migration \(position) (\(name)), which this build does not know; it was written by a newer version"
                )
            }
            guard known.name == name else {
                throw SQLiteStoreError(
                    code: .foreignDatabase, message: "\(path) records migration \(position) as \(name), not \(known.name): not a CodexKit state store"
                )
            }
        }
    }

    /// Adopts a new database or upgrades one of ours in a single transaction: the ownership check, the
    /// migration table and every pending migration commit together, so a refusal or a failure leaves
    /// the file exactly as it was.
    /// - Throws: `sqlite_foreign_database` (nothing written), `sqlite_schema_too_new`, or the SQLite
    ///   failure of a migration (rolled back).
    static func migrate(_ connection: SQLiteConnection, path: String, now: Date = Date()) throws(SQLiteStoreError) {
        try connection.execute("BEGIN IMMEDIATE")
        do throws(SQLiteStoreError) {
            var applied: [Int: String] = [:]
            switch try ownership(connection) {
            case .foreign:
                throw SQLiteStoreError(code: .foreignDatabase, message: "\(path) is a SQLite database of another application (it has tables and no codex_migrations); it was left unchanged")
            case .ours(let recorded):
                applied = recorded
                try checkKnown(recorded, path: path)
            case .empty:
                try connection.execute("""
                    CREATE TABLE codex_migrations (
                        position INTEGER PRIMARY KEY NOT NULL,
                        name TEXT NOT NULL UNIQUE,
                        applied_at REAL NOT NULL
                    )
                    """)
            }
            for migration in all where applied[migration.position] == nil {
                try connection.execute(migration.sql)
                try connection.run(
                    "INSERT INTO codex_migrations(position, name, applied_at) VALUES (?, ?, ?)",
                    [.integer(Int64(migration.position)), .text(migration.name), .real(now.timeIntervalSince1970)]
                )
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
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

    /// The tables and columns the migrations create, in column order: what a deep check expects.
    static let expectedColumns: [(table: String, columns: [String])] = [
        ("codex_migrations", ["position", "name", "applied_at"]),
        ("threads", ["id", "updated_at", "body"]),
        ("history_items", ["thread_id", "position", "kind", "body"]),
        ("turns", ["id", "thread_id", "started_at", "body"]),
        ("history_images", ["thread_id", "position", "ordinal", "attachment_id", "mime_type", "storage_key", "metadata"]),
    ]
}
