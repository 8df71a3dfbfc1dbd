import CodexCore

/// Creates the store's PostgreSQL schema and applies pending migrations in one transaction under an
/// advisory lock, so replicas starting at once migrate exactly once (the others wait, then find nothing
/// to do); checks a read-only store's schema without changing anything.
enum PostgresMigrator {
    /// The advisory lock key of `schema`'s migrations (FNV-1a of a fixed prefix and the name).
    static func lockKey(schema: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "codexkit.migrations.\(schema)".utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return Int64(bitPattern: hash)
    }

    /// Creates `schema` when it is missing and applies every pending migration.
    /// - Throws: ``PostgresStoreError`` `postgres_foreign_schema` (the schema has tables and no
    ///   `codex_migrations`, or recorded migrations this build does not know by name),
    ///   `postgres_schema_too_new`; the server's errors.
    static func migrate(_ connection: PostgresConnection, schema: String) throws(PostgresStoreError) {
        try connection.execute("BEGIN")
        do throws(PostgresStoreError) {
            try connection.run("SELECT pg_advisory_xact_lock($1)", [.integer(lockKey(schema: schema))])
            var exists = false
            try connection.run("SELECT 1 FROM pg_namespace WHERE nspname = $1", [.text(schema)]) { _ throws(PostgresStoreError) in exists = true }
            if !exists { try connection.execute("CREATE SCHEMA \(PostgresConnection.quoted(schema))") }
            let recorded = try self.recorded(connection, schema: schema)
            let known = PostgresStateSchema.migrations
            for migration in known.dropFirst(recorded.count) {
                try connection.execute(migration.sql)
                try connection.run("INSERT INTO codex_migrations(position, name) VALUES ($1, $2)", [.integer(Int64(migration.position)), .text(migration.name)])
            }
            try connection.execute("COMMIT")
        } catch {
            if connection.isHealthy { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// Checks, without changing anything, that `schema` is a state store this build can read.
    /// - Throws: ``PostgresStoreError`` `postgres_schema_outdated` (missing, or migrations pending),
    ///   `postgres_schema_too_new`, `postgres_foreign_schema`.
    static func check(_ connection: PostgresConnection, schema: String) throws(PostgresStoreError) {
        var exists = false
        try connection.run("SELECT 1 FROM pg_namespace WHERE nspname = $1", [.text(schema)]) { _ throws(PostgresStoreError) in exists = true }
        guard exists else {
            throw PostgresStoreError(code: .schemaOutdated, message: "the database has no state store in schema \(schema); open it for writing once to create it")
        }
        let recorded = try self.recorded(connection, schema: schema)
        guard recorded.count == PostgresStateSchema.migrations.count else {
            throw PostgresStoreError(code: .schemaOutdated, message: "the state store needs migrations; open it for writing once to apply them")
        }
    }

    /// The migrations recorded in `schema`, checked against this build's.
    static func recorded(_ connection: PostgresConnection, schema: String) throws(PostgresStoreError) -> [String] {
        var tables: [String] = []
        try connection.run("SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1", [.text(schema)]) { row throws(PostgresStoreError) in
            tables.append(row.text(0) ?? "")
        }
        guard tables.contains("codex_migrations") else {
            guard tables.isEmpty else {
                throw PostgresStoreError(
                    code: .foreignSchema, message: "schema \(schema) has tables of another application (\(tables.count)) and no codex_migrations; it is left as it is"
                )
            }
            return []
        }
        var recorded: [(Int64, String)] = []
        try connection.run("SELECT position, name FROM codex_migrations ORDER BY position") { row throws(PostgresStoreError) in
            recorded.append((row.integer(0), row.text(1) ?? ""))
        }
        let known = PostgresStateSchema.migrations
        guard recorded.count <= known.count else {
            throw PostgresStoreError(
                code: .schemaTooNew, message: "the state store has \(recorded.count) migrations; this build knows \(known.count)", table: "codex_migrations"
            )
        }
        for (index, migration) in recorded.enumerated() where migration.0 != Int64(known[index].position) || migration.1 != known[index].name {
            throw PostgresStoreError(
                code: .foreignSchema, message: "migration \(migration.0) is not one this build knows", table: "codex_migrations", rowKey: String(migration.0)
            )
        }
        return recorded.map(\.1)
    }
}
