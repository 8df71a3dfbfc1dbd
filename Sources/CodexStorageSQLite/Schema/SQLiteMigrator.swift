import Foundation

/// The one migration runner of every SQLite store: reads what a database holds, refuses what is not a
/// store of the schema's kind (or is newer than this build), and applies pending migrations in one
/// transaction, so a refusal or a failure leaves the file exactly as it was.
enum SQLiteMigrator {
    /// What a database file holds, as far as one schema is concerned.
    enum Ownership: Equatable {
        /// No tables at all: a new (or empty) database the store may adopt.
        case empty
        /// A store of the schema's kind: its migration table with what it records.
        case ours(applied: [Int: String])
        /// Tables of its own and no migration table of the schema's: something else's database.
        case foreign
    }

    /// Reads (never writes) what the database holds.
    static func ownership(_ connection: SQLiteConnection, _ schema: SQLiteSchema) throws(SQLiteStoreError) -> Ownership {
        let tables = try tableNames(connection)
        if tables.isEmpty { return .empty }
        guard tables.contains(schema.migrationTable) else { return .foreign }
        return .ours(applied: try recorded(connection, schema))
    }

    /// The names of the database's own tables (SQLite's internal tables left out).
    static func tableNames(_ connection: SQLiteConnection) throws(SQLiteStoreError) -> Set<String> {
        var tables = Set<String>()
        try connection.run("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'") { row throws(SQLiteStoreError) in
            tables.insert(row.text(0) ?? "")
        }
        return tables
    }

    /// The recorded migrations by position.
    static func recorded(_ connection: SQLiteConnection, _ schema: SQLiteSchema) throws(SQLiteStoreError) -> [Int: String] {
        var applied: [Int: String] = [:]
        try connection.run("SELECT position, name FROM \(schema.migrationTable) ORDER BY position") { row throws(SQLiteStoreError) in
            applied[Int(row.integer(0))] = row.text(1) ?? ""
        }
        return applied
    }

    /// Checks that every recorded migration is one this build knows, under its name.
    /// - Throws: `sqlite_schema_too_new` for a migration beyond this build's list, `sqlite_corrupt` for
    ///   a row no version writes, `sqlite_foreign_database` for a known position recorded under another
    ///   name.
    static func checkKnown(_ applied: [Int: String], _ schema: SQLiteSchema, path: String) throws(SQLiteStoreError) {
        let newest = schema.migrations.map(\.position).max() ?? 0
        for (position, name) in applied.sorted(by: { $0.key < $1.key }) {
            guard let known = schema.migrations.first(where: { $0.position == position }) else {
                // A newer version records later positions under real names; anything else in the table
                // (position 0 or a gap, an empty or garbled name) is damage, which an upgrade would not fix.
                guard position > newest, Self.isMigrationName(name) else {
                    throw SQLiteStoreError(
                        code: .corrupt,
                        message: "\(path) records a \(schema.migrationNoun) no version writes (position \(position)): the file is damaged"
                    )
                }
                throw SQLiteStoreError(
                    code: .schemaTooNew,
                    message: "\(path) records \(schema.migrationNoun) \(position) (\(name)), which this build does not know; it was written by a newer version"
                )
            }
            guard known.name == name else {
                throw SQLiteStoreError(
                    code: .foreignDatabase,
                    message: "\(path) records \(schema.migrationNoun) \(position) as \(name), not \(known.name): not a CodexKit \(schema.kind)"
                )
            }
        }
    }

    /// Whether `name` could be a migration's name: 1 to 100 lowercase ASCII letters, digits and `_`.
    static func isMigrationName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 100 && name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
    }

    /// Checks that the tables the schema requires are all there.
    /// - Throws: `sqlite_corrupt` naming the first missing table.
    static func checkTables(_ connection: SQLiteConnection, _ schema: SQLiteSchema, path: String) throws(SQLiteStoreError) {
        guard !schema.requiredTables.isEmpty else { return }
        let tables = try tableNames(connection)
        for table in schema.requiredTables where !tables.contains(table) {
            throw SQLiteStoreError(code: .corrupt, message: "\(path) is a \(schema.kind) without its \(table) table")
        }
    }

    /// Adopts a new database or upgrades one of the schema's kind in a single transaction: the ownership
    /// check, the migration table and every pending migration commit together.
    /// - Throws: `sqlite_foreign_database` (nothing written), `sqlite_schema_too_new`, `sqlite_corrupt`
    ///   for a required table missing after the migrations, or the SQLite failure of a migration (all
    ///   rolled back).
    static func migrate(_ connection: SQLiteConnection, _ schema: SQLiteSchema, path: String, now: Date = Date()) throws(SQLiteStoreError) {
        try connection.execute("BEGIN IMMEDIATE")
        do throws(SQLiteStoreError) {
            var applied: [Int: String] = [:]
            switch try ownership(connection, schema) {
            case .foreign:
                throw SQLiteStoreError(
                    code: .foreignDatabase,
                    message: "\(path) is a SQLite database of another application (it has tables and no \(schema.migrationTable)); it was left unchanged"
                )
            case .ours(let recorded):
                applied = recorded
                try checkKnown(recorded, schema, path: path)
            case .empty:
                try connection.execute(
                    "CREATE TABLE \(schema.migrationTable) (position INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL UNIQUE, applied_at REAL NOT NULL)"
                )
            }
            for migration in schema.migrations where applied[migration.position] == nil {
                // Which migration failed, and for its SQL SQLite's own reason (about our statements and the
                // file's schema, never a row's content): "a statement failed" alone says nothing to act on.
                func named(_ error: SQLiteStoreError, reason: String?) -> SQLiteStoreError {
                    var named = error
                    named.message = "\(schema.migrationNoun) \(migration.position) (\(migration.name)) failed on \(path): \(error.message)"
                        + (reason.map { " (\($0))" } ?? "")
                    return named
                }
                do throws(SQLiteStoreError) {
                    if !migration.sql.isEmpty { try connection.execute(migration.sql) }
                } catch {
                    throw named(error, reason: connection.lastErrorMessage)
                }
                do throws(SQLiteStoreError) {
                    try migration.step?(connection)
                } catch {
                    throw named(error, reason: nil)
                }
                try connection.run(
                    "INSERT INTO \(schema.migrationTable)(position, name, applied_at) VALUES (?, ?, ?)",
                    [.integer(Int64(migration.position)), .text(migration.name), .real(now.timeIntervalSince1970)]
                )
            }
            try checkTables(connection, schema, path: path)
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// Refuses, for reading, what is not a store of the schema's kind at the migrations this build knows.
    /// - Throws: `sqlite_not_found` (no tables), `sqlite_foreign_database`, `sqlite_schema_too_new`,
    ///   `sqlite_schema_outdated` (a migration a read-only open cannot apply), `sqlite_corrupt`.
    static func checkReadable(_ connection: SQLiteConnection, _ schema: SQLiteSchema, path: String) throws(SQLiteStoreError) {
        switch try ownership(connection, schema) {
        case .empty:
            throw SQLiteStoreError(code: .notFound, message: "\(path) is a SQLite database without tables: no \(schema.kind) was ever written to it")
        case .foreign:
            throw SQLiteStoreError(
                code: .foreignDatabase, message: "\(path) is a SQLite database of another application (it has tables and no \(schema.migrationTable))"
            )
        case .ours(let applied):
            try checkKnown(applied, schema, path: path)
            if let missing = schema.migrations.first(where: { applied[$0.position] == nil }) {
                throw SQLiteStoreError(
                    code: .schemaOutdated,
                    message: "\(path) needs \(schema.migrationNoun) \(missing.position) (\(missing.name)); \(schema.migrateHint)"
                )
            }
            if schema.checksTablesOnRead { try checkTables(connection, schema, path: path) }
        }
    }
}
