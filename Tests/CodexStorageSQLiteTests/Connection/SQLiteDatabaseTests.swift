@testable import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// The one engine under both stores: every open-mode rule holds for each schema, and a schema of the
/// test's own shows the migration runner rolls a failed step back.
@Suite struct SQLiteDatabaseTests {
    /// The two schemas the engine serves, by name (for readable test arguments).
    static let schemas: [String: SQLiteSchema] = ["state": SQLiteStateSchema.schema, "memory": SQLiteMemorySchema.schema]

    @Test(arguments: ["state", "memory"])
    func eachSchemaRefusesTheOthersDatabaseForWritingAndReadingAndLeavesItByteIdentical(_ name: String) async throws {
        let scratch = try SQLiteOpenModeTests.Scratch()
        let path = scratch.path("other.sqlite")
        let other = try #require(Self.schemas.first { $0.key != name }?.value)
        _ = try SQLiteDatabase(path: path, schema: other)
        let before = DirectorySnapshot(scratch.directory)
        let schema = try #require(Self.schemas[name])

        let writing = #expect(throws: SQLiteStoreError.self) { try SQLiteDatabase(path: path, schema: schema) }
        #expect(writing?.code == .foreignDatabase)
        #expect(writing?.message == "\(path) is a SQLite database of another application (it has tables and no \(schema.migrationTable)); it was left unchanged")
        let reading = #expect(throws: SQLiteStoreError.self) { try SQLiteDatabase(readingAt: path, schema: schema) }
        #expect(reading?.code == .foreignDatabase)
        #expect(DirectorySnapshot(scratch.directory).differences(from: before) == [])
    }

    @Test(arguments: ["state", "memory"])
    func aReadOnlyOpenOfAFreshStoreCreatesNoFileAndRefusesWrites(_ name: String) async throws {
        let schema = try #require(Self.schemas[name])
        let scratch = try SQLiteOpenModeTests.Scratch()
        let path = scratch.path("store.sqlite")
        _ = try SQLiteDatabase(path: path, schema: schema)
        let before = DirectorySnapshot(scratch.directory)
        #expect(before.entries.map(\.path).sorted() == ["", "store.sqlite"], "the last connection removes -wal and -shm")

        let database = try SQLiteDatabase(readingAt: path, schema: schema)
        let applied = try await database.read { connection throws(SQLiteStoreError) in try SQLiteMigrator.recorded(connection, schema).count }
        #expect(applied == schema.migrations.count)
        let refused = await #expect(throws: SQLiteStoreError.self) {
            try await database.write { connection throws(SQLiteStoreError) in try connection.execute("CREATE TABLE x (y)") }
        }
        #expect(refused?.code == .writeRefused)
        #expect(DirectorySnapshot(scratch.directory).differences(from: before) == [])
    }

    @Test(arguments: ["state", "memory"])
    func aMigrationThisBuildDoesNotKnowIsRefusedNamingIt(_ name: String) throws {
        let schema = try #require(Self.schemas[name])
        let scratch = try SQLiteOpenModeTests.Scratch()
        let path = scratch.path("store.sqlite")
        do {
            let database = try SQLiteDatabase(path: path, schema: schema)
            try database.withConnection { connection throws(SQLiteStoreError) in
                try connection.execute("INSERT INTO \(schema.migrationTable)(position, name, applied_at) VALUES (99, 'from_the_future', 0)")
            }
        }
        for open in [{ try SQLiteDatabase(path: path, schema: schema) }, { try SQLiteDatabase(readingAt: path, schema: schema) }] as [() throws -> SQLiteDatabase] {
            let error = #expect(throws: SQLiteStoreError.self) { _ = try open() }
            #expect(error?.code == .schemaTooNew)
            #expect(error?.message == "\(path) records \(schema.migrationNoun) 99 (from_the_future), which this build does not know; it was written by a newer version")
        }
    }

    /// A migration row no version writes (position 0, a gap, an empty or garbled name: what a damaged
    /// page reads as) is damage, not a newer version: upgrading would not help, restoring would.
    @Test(arguments: [(0, "create_everything"), (99, ""), (99, "From The Future"), (99, "x\u{1}y"), (-3, "from_the_future")])
    func aMigrationRowNoVersionWritesIsDamage(_ position: Int, _ name: String) throws {
        let scratch = try SQLiteOpenModeTests.Scratch()
        let path = scratch.path("store.sqlite")
        do {
            let database = try SQLiteDatabase(path: path, schema: SQLiteStateSchema.schema)
            try database.withConnection { connection throws(SQLiteStoreError) in
                try connection.run("INSERT INTO codex_migrations(position, name, applied_at) VALUES (?, ?, 0)", [.integer(Int64(position)), .text(name)])
            }
        }
        for open in [{ try SQLiteDatabase(path: path, schema: SQLiteStateSchema.schema) }, { try SQLiteDatabase(readingAt: path, schema: SQLiteStateSchema.schema) }] as [() throws -> SQLiteDatabase] {
            let error = #expect(throws: SQLiteStoreError.self) { _ = try open() }
            #expect(error?.code == .corrupt)
            #expect(error?.message == "\(path) records a migration no version writes (position \(position)): the file is damaged")
        }
    }

    @Test func aFailedMigrationStepRollsBackItsSQLAndEveryEarlierMigrationOfTheOpen() throws {
        let scratch = try SQLiteOpenModeTests.Scratch()
        let path = scratch.path("custom.sqlite")
        let first = SQLiteSchema.Migration(position: 1, name: "create_a", sql: "CREATE TABLE a (x)")
        _ = try SQLiteDatabase(path: path, schema: SQLiteSchema(kind: "test store", migrationNoun: "migration", migrationTable: "test_migrations", migrations: [first]))
        let before = DirectorySnapshot(scratch.directory)

        let failing = SQLiteSchema(
            kind: "test store", migrationNoun: "migration", migrationTable: "test_migrations",
            migrations: [
                first,
                SQLiteSchema.Migration(position: 2, name: "create_b", sql: "CREATE TABLE b (x); INSERT INTO a VALUES (1)"),
                SQLiteSchema.Migration(position: 3, name: "fill_c", sql: "CREATE TABLE c (x)") { _ throws(SQLiteStoreError) in
                    throw SQLiteStoreError(code: .rowUndecodable, message: "the step failed")
                },
            ]
        )
        let error = #expect(throws: SQLiteStoreError.self) { try SQLiteDatabase(path: path, schema: failing) }
        #expect(error?.code == .rowUndecodable)
        #expect(error?.message == "migration 3 (fill_c) failed on \(path): the step failed")
        #expect(DirectorySnapshot(scratch.directory).differences(from: before) == [])
        let reopened = try SQLiteDatabase(readingAt: path, schema: SQLiteSchema(kind: "test store", migrationNoun: "migration", migrationTable: "test_migrations", migrations: [first]))
        let tables = try reopened.withConnection { connection throws(SQLiteStoreError) in try SQLiteMigrator.tableNames(connection) }
        #expect(tables == ["a", "test_migrations"])
    }

    @Test func aRequiredTableMissingAfterTheMigrationsIsCorruptForWritingAndReading() throws {
        let scratch = try SQLiteOpenModeTests.Scratch()
        let path = scratch.path("custom.sqlite")
        var schema = SQLiteSchema(
            kind: "test store", migrationNoun: "migration", migrationTable: "test_migrations",
            migrations: [SQLiteSchema.Migration(position: 1, name: "create_a", sql: "CREATE TABLE a (x)")]
        )
        _ = try SQLiteDatabase(path: path, schema: schema)
        schema.requiredTables = ["a", "b"]
        let writing = #expect(throws: SQLiteStoreError.self) { try SQLiteDatabase(path: path, schema: schema) }
        #expect(writing?.code == .corrupt)
        #expect(writing?.message == "\(path) is a test store without its b table")
        let reading = #expect(throws: SQLiteStoreError.self) { try SQLiteDatabase(readingAt: path, schema: schema) }
        #expect(reading?.message == "\(path) is a test store without its b table")
    }
}
