import CodexCore
@testable import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// The SQLite store's usage ledger beyond the shared contract: the migration that adds it to an older
/// store, the read-only open that can query it and refuses to write it, and the deep check of its rows.
@Suite struct SQLiteUsageLedgerTests {
    typealias Scratch = SQLiteOpenModeTests.Scratch

    static func record(_ thread: AgentThreadID, sequence: Int = 0, model: String = "gpt-6-astra") -> AgentUsageRecord {
        AgentUsageRecord(
            threadID: thread, turnID: "turn-1", sequence: sequence, accountBinding: "acct-1", model: model,
            recordedAt: Date(timeIntervalSince1970: 1_800_000_000 + Double(sequence)), usage: AgentUsage(inputTokens: 100, cachedInputTokens: 40, outputTokens: 20)
        )
    }

    @Test func aVersionThreeStoreIsRefusedForReadingAndGetsTheLedgerWhenOpenedForWriting() async throws {
        let scratch = try Scratch()
        let path = scratch.path("v3.sqlite")
        let thread = try await SQLiteOpenModeTests.populatedStore(at: path)
        // Back to schema 3: the ledger's table and its migration record removed.
        do {
            let store = try SQLiteRuntimeStateStore(path: path)
            try store.database.withConnection { connection throws(SQLiteStoreError) in
                try connection.execute("DROP TABLE usage_records; DELETE FROM codex_migrations WHERE position = 4")
            }
            #expect(try store.schemaVersion == 3)
            try store.checkpoint()
        }
        let before = DirectorySnapshot(scratch.directory)
        let reading = #expect(throws: SQLiteStoreError.self) { try SQLiteRuntimeStateStore(readingAt: path) }
        #expect(reading?.code == .schemaOutdated)
        #expect(DirectorySnapshot(scratch.directory).differences(from: before) == [])

        let store = try SQLiteRuntimeStateStore(path: path)
        #expect(try store.schemaVersion == 4)
        #expect(SQLiteStateSchema.schema.migrations.map(\.name).last == "create_usage_records")
        #expect(try await store.thread(thread.id)?.title == "Orders")
        try await store.recordUsage([Self.record(thread.id)])
        #expect(try await store.usageRecords(matching: AgentUsageQuery()) == [Self.record(thread.id)])
        #expect(try await store.check().isHealthy)
    }

    @Test func aReadOnlyStoreQueriesTheLedgerAndRefusesToWriteIt() async throws {
        let scratch = try Scratch()
        let path = scratch.path("state.sqlite")
        let thread = try await SQLiteOpenModeTests.populatedStore(at: path)
        do {
            let store = try SQLiteRuntimeStateStore(path: path)
            try await store.recordUsage([Self.record(thread.id), Self.record(thread.id, sequence: 1, model: "gpt-6-astra-mini")])
        }
        let before = DirectorySnapshot(scratch.directory)
        let reader = try SQLiteRuntimeStateStore(readingAt: path)
        #expect(try await reader.usageRecords(matching: AgentUsageQuery(model: "gpt-6-astra-mini")) == [Self.record(thread.id, sequence: 1, model: "gpt-6-astra-mini")])
        let refused = await #expect(throws: SQLiteStoreError.self) { try await reader.recordUsage([Self.record(thread.id, sequence: 2)]) }
        #expect(refused?.code == .writeRefused)
        // An empty batch is a no-op even on a reader: nothing to refuse.
        try await reader.recordUsage([])
        #expect(try await reader.check().isHealthy)
        #expect(DirectorySnapshot(scratch.directory).differences(from: before) == [])
    }

    @Test func theDeepCheckAndTheReaderNameABadUsageRow() async throws {
        let store = try SQLiteRuntimeStateStore(path: ":memory:")
        let thread = AgentThread(title: "ledger")
        try await store.upsertThread(thread)
        try await store.recordUsage([Self.record(thread.id), Self.record(thread.id, sequence: 1)])
        #expect(try await store.check().rowsChecked == 3)
        // A column that disagrees with the body: the query by model would miss the record.
        try store.database.withConnection { connection throws(SQLiteStoreError) in
            try connection.execute("UPDATE usage_records SET model = 'other' WHERE sequence = 0")
        }
        var report = try await store.check()
        #expect(report.problems == [.init(table: "usage_records", rowKey: "turn-1/0", message: "a usage row's account, model or date column disagrees with its body")])
        // A body naming another request than its key.
        let moved = try JSONEncoder().encode(Self.record(thread.id, sequence: 7))
        try store.database.withConnection { connection throws(SQLiteStoreError) in
            try connection.run("UPDATE usage_records SET body = ? WHERE sequence = 1", [.blob(Array(moved))])
        }
        report = try await store.check()
        #expect(report.problems.map(\.rowKey) == ["turn-1/0", "turn-1/1"])
        #expect(report.problems.last?.message == "a usage row's body names another turn, request or thread than its key")
        let reading = await #expect(throws: SQLiteStoreError.self) { _ = try await store.usageRecords(matching: AgentUsageQuery()) }
        #expect(reading?.code == .rowUndecodable)
        #expect(reading?.table == "usage_records")
        #expect(reading?.rowKey == "turn-1/1")
    }

    /// A negative token count or a date past year 9999 in a stored row is damage: the reader names the
    /// row (the day grouping once crashed on `1e300` seconds), and the deep check finds it, as it finds a
    /// journal entry or an approval that cannot be decoded (it once read neither table).
    @Test func impossibleCountsDatesJournalEntriesAndApprovalsAreDamageTheCheckFinds() async throws {
        let store = try SQLiteRuntimeStateStore(path: ":memory:")
        let thread = AgentThread(title: "ledger")
        try await store.upsertThread(thread)
        let negative = { var record = Self.record(thread.id); record.usage.inputTokens = -5; return record }()
        let farOff = { var record = Self.record(thread.id, sequence: 1); record.recordedAt = Date(timeIntervalSinceReferenceDate: 1e300); return record }()
        // The store never writes what it would refuse to read.
        let negativeWrite = await #expect(throws: SQLiteStoreError.self) { try await store.recordUsage([negative]) }
        #expect(negativeWrite?.message == "a usage record with a negative token count cannot be stored")
        let farWrite = await #expect(throws: SQLiteStoreError.self) { try await store.recordUsage([farOff]) }
        #expect(farWrite?.message == "a date outside the years 0 to 9999 cannot be stored")
        #expect(try await store.usageRecords(matching: AgentUsageQuery()) == [])
        // Damage written by something else: rows forged beside the store.
        let forged = try [negative, farOff].map { record -> [SQLiteValue] in
            [
                .text(record.turnID.rawValue), .integer(Int64(record.sequence)), .text(thread.id.rawValue), .text("acct-1"), .text(record.model),
                .real(record.recordedAt.timeIntervalSince1970), .blob(Array(try JSONEncoder().encode(record))),
            ]
        }
        try store.database.withConnection { connection throws(SQLiteStoreError) in
            for row in forged {
                try connection.run(
                    "INSERT INTO usage_records (turn_id, sequence, thread_id, account_binding, model, recorded_at, body) VALUES (?, ?, ?, ?, ?, ?, ?)", row
                )
            }
            try connection.run("INSERT INTO turn_journal (turn_id, sequence, thread_id, body) VALUES ('turn-9', 0, ?, ?)", [.text(thread.id.rawValue), .blob(Array("{not json".utf8))])
            try connection.run("INSERT INTO approvals (id, thread_id, requested_at, body) VALUES ('appr-1', ?, 0, ?)", [.text(thread.id.rawValue), .blob(Array("{not json".utf8))])
        }
        let report = try await store.check()
        #expect(report.problems == [
            .init(table: "usage_records", rowKey: "turn-1/0", message: "a usage row holds a negative token count"),
            .init(table: "usage_records", rowKey: "turn-1/1", message: "a stored AgentUsageRecord could not be decoded"),
            .init(table: "turn_journal", rowKey: "turn-9/0", message: "a journal entry could not be decoded"),
            .init(table: "approvals", rowKey: "appr-1", message: "a stored approval could not be decoded"),
        ])
        #expect(report.rowsChecked == 5)
        let reading = await #expect(throws: SQLiteStoreError.self) { _ = try await store.usageRecords(matching: AgentUsageQuery()) }
        #expect(reading?.code == .rowUndecodable)
        // A thread whose date is past year 9999 is refused where it is written, and where it is read
        // (forged), not shown as a wrong date.
        let future = AgentThread(title: "far")
        let far = { var thread = future; thread.updatedAt = Date(timeIntervalSinceReferenceDate: 1e300); return thread }()
        let farThread = await #expect(throws: SQLiteStoreError.self) { try await store.upsertThread(far) }
        #expect(farThread?.message == "a date outside the years 0 to 9999 cannot be stored")
        try await store.upsertThread(future)
        let farBody = Array(try JSONEncoder().encode(far))
        try store.database.withConnection { connection throws(SQLiteStoreError) in
            try connection.run("UPDATE threads SET body = ? WHERE id = ?", [.blob(farBody), .text(future.id.rawValue)])
        }
        let threads = await #expect(throws: SQLiteStoreError.self) { _ = try await store.thread(future.id) }
        #expect(threads?.code == .rowUndecodable)
        #expect(threads?.rowKey == future.id.rawValue)
        // The edges of what a store keeps still read back.
        var edges = AgentThread(title: "edges")
        edges.createdAt = .distantPast
        edges.updatedAt = Date(timeIntervalSince1970: 253_402_300_799)
        try await store.upsertThread(edges)
        #expect(try await store.thread(edges.id)?.createdAt == .distantPast)
    }

    /// A store whose migrations are recorded but whose ledger table is gone is damaged: a reader's query
    /// names the missing table (it was a bare "statement could not be prepared"), and opening it for
    /// writing (`db migrate`) refuses it instead of reporting the schema current.
    @Test func aMissingTableIsNamedByTheReaderAndRefusedByTheWriter() async throws {
        let scratch = try Scratch()
        let path = scratch.path("state.sqlite")
        _ = try await SQLiteOpenModeTests.populatedStore(at: path)
        do {
            let store = try SQLiteRuntimeStateStore(path: path)
            try store.database.withConnection { connection throws(SQLiteStoreError) in try connection.execute("DROP TABLE usage_records") }
        }
        let reader = try SQLiteRuntimeStateStore(readingAt: path)
        let reading = await #expect(throws: SQLiteStoreError.self) { _ = try await reader.usageRecords(matching: AgentUsageQuery()) }
        #expect(reading?.code == .corrupt)
        #expect(reading?.message.hasSuffix("state.sqlite: no such table: usage_records") == true, "\(String(describing: reading?.message))")
        let writing = #expect(throws: SQLiteStoreError.self) { _ = try SQLiteRuntimeStateStore(path: path) }
        #expect(writing?.code == .corrupt)
        #expect(writing?.message == "\(path) is a state store without its usage_records table")
    }
}
