import CodexCore
@testable import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// Looking never writes, and writing never adopts what is not ours: the read-only open, the refusal of
/// foreign databases, migrations that change nothing when they fail, private files.
@Suite struct SQLiteOpenModeTests {
    /// A fresh directory for one test, removed afterwards.
    final class Scratch {
        let directory: String
        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-open-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: directory) }
        func path(_ name: String) -> String { directory + "/" + name }
    }

    /// A SQLite database of another application, written with SQLite directly.
    static func foreignDatabase(at path: String, journal: String = "WAL") throws {
        try SQLiteDatabaseFile(path: path).createPrivate()
        let connection = try SQLiteConnection(path: path, mode: .readWrite)
        try connection.execute("""
            PRAGMA journal_mode=\(journal);
            CREATE TABLE threads (x TEXT);
            CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);
            INSERT INTO threads VALUES ('theirs');
            INSERT INTO notes(body) VALUES ('keep me');
            """)
        if journal == "WAL" { try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// A store at schema version 1, as the first build wrote it (rollback journal), then `sql`.
    static func schemaOneStore(at path: String, then sql: String) throws {
        try SQLiteDatabaseFile(path: path).createPrivate()
        let connection = try SQLiteConnection(path: path, mode: .readWrite)
        try connection.execute("CREATE TABLE codex_migrations (position INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL UNIQUE, applied_at REAL NOT NULL)")
        try connection.execute(SQLiteStateSchema.schema.migrations[0].sql)
        try connection.execute("INSERT INTO codex_migrations VALUES (1, '\(SQLiteStateSchema.schema.migrations[0].name)', 0)")
        try connection.execute(sql)
    }

    /// A store of ours with one thread, its history and an image, closed cleanly (no `-wal` left).
    static func populatedStore(at path: String) async throws -> AgentThread {
        let thread = AgentThread(title: "Orders")
        do {
            let store = try SQLiteRuntimeStateStore(path: path)
            try await store.upsertThread(thread)
            try await store.appendHistory(RuntimeStateStoreConformance.sampleHistory(thread: thread.id, turn: AgentTurnID()), to: thread.id)
            let image = AgentImageAttachment.png(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 100)))
            try await store.appendHistory([.message(AgentMessage(threadID: thread.id, role: .user, text: "see", images: [image]))], to: thread.id)
            try await store.upsertTurn(AgentTurn(threadID: thread.id, status: .completed))
        }
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "the last connection removes the WAL")
        return thread
    }

    @Test func aForeignDatabaseIsRefusedForWritingAndReadingAndLeftByteIdenticalWithItsMode() throws {
        for journal in ["WAL", "DELETE"] {
            let scratch = try Scratch()
            let path = scratch.path("other-app.sqlite")
            try Self.foreignDatabase(at: path, journal: journal)
            // Readable by others, as another application may keep it: a refused open must not make it
            // private (the snapshot compares modes too).
            #expect(chmod(path, 0o644) == 0)
            let before = DirectorySnapshot(scratch.directory)

            let writing = #expect(throws: SQLiteStoreError.self) { try SQLiteRuntimeStateStore(path: path) }
            #expect(writing?.code == .foreignDatabase)
            #expect(writing?.message.contains(path) == true)
            let reading = #expect(throws: SQLiteStoreError.self) { try SQLiteRuntimeStateStore(readingAt: path) }
            #expect(reading?.code == .foreignDatabase)

            #expect(DirectorySnapshot(scratch.directory).differences(from: before) == [], "journal \(journal)")
        }
    }

    @Test func aFailedMigrationLeavesTheFileByteIdentical() throws {
        let scratch = try Scratch()
        let path = scratch.path("v1.sqlite")
        // A store at schema 1 (as an older build wrote it, in rollback-journal mode so the migration would
        // write the main file itself) that also has a table in the way of migration 2.
        try Self.schemaOneStore(at: path, then: "CREATE TABLE history_images (unrelated TEXT)")
        let before = DirectorySnapshot(scratch.directory)
        let error = #expect(throws: SQLiteStoreError.self) { try SQLiteRuntimeStateStore(path: path) }
        #expect(error?.code == .failure)
        #expect(DirectorySnapshot(scratch.directory).differences(from: before) == [])
    }

    @Test func readingAMissingOrEmptyPathIsAnErrorNamingItAndCreatesNothing() throws {
        let scratch = try Scratch()
        let before = DirectorySnapshot(scratch.directory)
        let missing = #expect(throws: SQLiteStoreError.self) { try SQLiteRuntimeStateStore(readingAt: scratch.path("nope.sqlite")) }
        #expect(missing?.code == .notFound)
        #expect(missing?.message == "cannot open \(scratch.path("nope.sqlite")): no such file")
        let noDirectory = #expect(throws: SQLiteStoreError.self) { try SQLiteRuntimeStateStore(readingAt: scratch.path("x/y.sqlite")) }
        #expect(noDirectory?.message == "cannot open \(scratch.path("x/y.sqlite")): no such directory")
        #expect(DirectorySnapshot(scratch.directory).differences(from: before) == [])

        _ = FileManager.default.createFile(atPath: scratch.path("empty.sqlite"), contents: nil)
        let withEmpty = DirectorySnapshot(scratch.directory)
        let empty = #expect(throws: SQLiteStoreError.self) { try SQLiteRuntimeStateStore(readingAt: scratch.path("empty.sqlite")) }
        #expect(empty?.code == .notFound)
        #expect(DirectorySnapshot(scratch.directory).differences(from: withEmpty) == [])

        // For writing, a missing directory is an error too (it is not created).
        let writing = #expect(throws: SQLiteStoreError.self) { try SQLiteRuntimeStateStore(path: scratch.path("x/y.sqlite")) }
        #expect(writing?.message == "cannot create \(scratch.path("x/y.sqlite")): no such directory")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("x")))
    }

    @Test func aReadOnlyOpenReadsEverythingAndChangesNothingOnDisk() async throws {
        let scratch = try Scratch()
        let path = scratch.path("state.sqlite")
        let thread = try await Self.populatedStore(at: path)
        let before = DirectorySnapshot(scratch.directory)
        do {
            let store = try SQLiteRuntimeStateStore(readingAt: path)
            #expect(store.isReadOnly)
            #expect(try await store.threads().map(\.id) == [thread.id])
            let page = try await store.history(of: thread.id, query: .init(limit: 100))
            #expect(page.items.count == 7)
            if case .message(let message) = page.items.last { #expect(message.images.count == 1) } else { Issue.record("no image message") }
            #expect(try await store.latestTurn(of: thread.id)?.status == .completed)
            let report = try await store.check()
            #expect(report.isHealthy, "\(report.problems)")
            #expect(report.rowsChecked == 1 + 7 + 1 + 1)
            #expect(try store.schemaVersion == SQLiteStateSchema.schema.migrations.count)
            #expect(try store.isOwnerLeaseHeld("nobody") == false)
            #expect(try store.acquireOwnerLease() == nil)
        }
        #expect(DirectorySnapshot(scratch.directory).differences(from: before) == [])
    }

    @Test func aReadOnlyStoreRefusesEveryWriteBeforeTouchingAnything() async throws {
        let scratch = try Scratch()
        let path = scratch.path("state.sqlite")
        let thread = try await Self.populatedStore(at: path)
        let before = DirectorySnapshot(scratch.directory)
        let store = try SQLiteRuntimeStateStore(readingAt: path)
        let image = AgentImageAttachment.png(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 9, count: 100)))
        let writes: [@Sendable () async throws -> Void] = [
            { try await store.upsertThread(AgentThread()) },
            { try await store.appendHistory([.message(AgentMessage(threadID: thread.id, role: .user, text: "x", images: [image]))], to: thread.id) },
            { try await store.deleteThread(thread.id) },
            { try await store.upsertTurn(AgentTurn(threadID: thread.id)) },
            { try await store.recordTurn(AgentTurn(threadID: thread.id), appending: [], threadStatus: .running, at: Date()) },
            { _ = try await store.sweepOrphanedAttachments() },
        ]
        for write in writes {
            let error = await #expect(throws: SQLiteStoreError.self) { try await write() }
            #expect(error?.code == .writeRefused)
        }
        #expect(DirectorySnapshot(scratch.directory).differences(from: before) == [])
    }

    @Test func aReaderFollowsAWriterThatAppearsAfterItOpened() async throws {
        let scratch = try Scratch()
        let path = scratch.path("state.sqlite")
        let first = try await Self.populatedStore(at: path)
        let reader = try SQLiteRuntimeStateStore(readingAt: path)
        #expect(try await reader.threads().count == 1)
        // A writer opens and commits while the reader is open (the reader saw no WAL at first).
        let writer = try SQLiteRuntimeStateStore(path: path)
        let second = AgentThread(title: "Later", updatedAt: Date().addingTimeInterval(60))
        try await writer.upsertThread(second)
        #expect(try await reader.threads().map(\.id) == [second.id, first.id])
        try await writer.deleteThread(first.id)
        #expect(try await reader.threads().map(\.id) == [second.id])
    }

    @Test func anOutdatedSchemaIsRefusedForReadingAndMigratedForWriting() async throws {
        let scratch = try Scratch()
        let path = scratch.path("v1.sqlite")
        let thread = String(decoding: try JSONEncoder().encode(AgentThread(id: AgentThreadID(rawValue: "t-1"))), as: UTF8.self)
        try Self.schemaOneStore(at: path, then: "INSERT INTO threads VALUES ('t-1', 0, '\(thread)')")
        let before = DirectorySnapshot(scratch.directory)
        let reading = #expect(throws: SQLiteStoreError.self) { try SQLiteRuntimeStateStore(readingAt: path) }
        #expect(reading?.code == .schemaOutdated)
        #expect(DirectorySnapshot(scratch.directory).differences(from: before) == [])

        let store = try SQLiteRuntimeStateStore(path: path)
        #expect(try store.schemaVersion == SQLiteStateSchema.schema.migrations.count)
        #expect(try await store.threads().map(\.id.rawValue) == ["t-1"])
    }

    @Test func aThreadRowWhoseBodyNamesAnotherIDIsReportedWithItsKey() async throws {
        let scratch = try Scratch()
        let path = scratch.path("state.sqlite")
        let thread = try await Self.populatedStore(at: path)
        let store = try SQLiteRuntimeStateStore(path: path)
        let impostor = try JSONEncoder().encode(AgentThread(id: AgentThreadID(rawValue: "someone-else")))
        try store.database.withConnection { connection throws(SQLiteStoreError) in
            try connection.run("UPDATE threads SET body = ? WHERE id = ?", [.blob(Array(impostor)), .text(thread.id.rawValue)])
        }
        let listing = await #expect(throws: SQLiteStoreError.self) { _ = try await store.threads() }
        #expect(listing?.code == .rowUndecodable)
        #expect(listing?.table == "threads")
        #expect(listing?.rowKey == thread.id.rawValue)
        let one = await #expect(throws: SQLiteStoreError.self) { _ = try await store.thread(thread.id) }
        #expect(one?.rowKey == thread.id.rawValue)
        #expect(try await store.thread(AgentThreadID(rawValue: "someone-else")) == nil)
    }

    @Test func theDeepCheckFindsMissingTablesBadRowsAndMissingBlobs() async throws {
        let scratch = try Scratch()
        let path = scratch.path("state.sqlite")
        let thread = try await Self.populatedStore(at: path)
        do {
            let store = try SQLiteRuntimeStateStore(path: path)
            #expect(try await store.check().isHealthy)
            try store.database.withConnection { connection throws(SQLiteStoreError) in
                try connection.run("UPDATE history_items SET body = ? WHERE thread_id = ? AND position = 2", [.blob(Array("{not a row".utf8)), .text(thread.id.rawValue)])
            }
            var report = try await store.check()
            #expect(report.integrity == ["ok"])
            #expect(!report.isHealthy)
            #expect(report.problems == [.init(table: "history_items", rowKey: "\(thread.id.rawValue)/2", message: "a stored history item could not be decoded")])
            // SQLite's own check alone does not see it.
            #expect(try await store.check(.quick).isHealthy)

            for key in SQLiteAttachmentFiles(directory: URL(fileURLWithPath: path + ".attachments")).keys() {
                try FileManager.default.removeItem(atPath: path + ".attachments/" + key.prefix(2) + "/" + key)
            }
            report = try await store.check()
            #expect(report.problems.map(\.table) == ["history_items", "history_images"])
            #expect(report.problems.last?.message == "the image's blob file is missing or unreadable")
            #expect(report.problems.last?.rowKey == "\(thread.id.rawValue)/7/0")

            try store.database.withConnection { connection throws(SQLiteStoreError) in try connection.execute("DROP TABLE turns") }
            report = try await store.check()
            #expect(report.problems.contains(.init(table: "turns", message: "the table is missing")))
        }
    }

    @Test func everyFileAStoreCreatesIsPrivateUnderUmask022() async throws {
        let scratch = try Scratch()
        let path = scratch.path("state.sqlite")
        // A child process with umask 022 creates the database, its WAL and SHM, an image blob and an owner
        // lease, and holds them open while the test looks.
        let outcome = try await ChildProcess.run(
            ChildProcess.product("StorageFixture"),
            ["--db", path, "--thread", UUID().uuidString, "--writer", "perm", "--turns", "1", "--umask", "022", "--image", "--lease"]
        )
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let snapshot = DirectorySnapshot(scratch.directory)
        let created = snapshot.entries.filter { !$0.path.isEmpty }
        #expect(created.contains { $0.path == "state.sqlite.attachments" })
        #expect(created.contains { $0.path == "state.sqlite.owners/slot-0.lock" })
        for entry in created {
            #expect(entry.mode == (entry.kind == "directory" ? 0o700 : 0o600), "\(entry.path) is \(String(entry.mode, radix: 8))")
        }
        // The WAL and SHM exist only while a connection is open: open one and look at them too.
        let store = try SQLiteRuntimeStateStore(path: path)
        _ = try await store.threads()
        for suffix in ["-wal", "-shm"] {
            let entry = DirectorySnapshot(path + suffix).entries.first
            #expect(entry?.mode == 0o600, "\(suffix)")
        }
    }

    @Test func aSymlinkInPlaceOfTheAttachmentDirectoryIsRefusedForWriting() throws {
        let scratch = try Scratch()
        let path = scratch.path("state.sqlite")
        try FileManager.default.createSymbolicLink(atPath: path + ".attachments", withDestinationPath: "/tmp")
        let error = #expect(throws: SQLiteStoreError.self) { try SQLiteRuntimeStateStore(path: path) }
        #expect(error?.message == "\(path).attachments is not a directory (a symbolic link or a file is in the way)")
    }

    @Test func anExistingStoreReadableByOthersIsTightenedWhenOpenedForWriting() async throws {
        let scratch = try Scratch()
        let path = scratch.path("state.sqlite")
        _ = try await Self.populatedStore(at: path)
        chmod(path, 0o644)
        let store = try SQLiteRuntimeStateStore(path: path)
        _ = try await store.threads()
        #expect(DirectorySnapshot(path).entries.first?.mode == 0o600)
        #expect(DirectorySnapshot(path + "-wal").entries.first?.mode == 0o600)
    }
}
