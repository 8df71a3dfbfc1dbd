import CodexCore
@testable import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// The store suite against a real file and `:memory:`, plus what only SQLite has: migrations, schema
/// refusal, corrupt files, integrity.
@Suite struct SQLiteRuntimeStateStoreTests {
    private static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-sqlite-\(UUID().uuidString).sqlite").path
    }

    @Test func theStoreSuitePassesOnAFile() async throws {
        var paths: [String] = []
        defer { for path in paths { Self.remove(path) } }
        let problems = try await RuntimeStateStoreConformance.run {
            let path = Self.temporaryPath()
            paths.append(path)
            return try SQLiteRuntimeStateStore(path: path)
        }
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func theStoreSuitePassesInMemory() async throws {
        let problems = try await RuntimeStateStoreConformance.run { try SQLiteRuntimeStateStore(path: ":memory:") }
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func migrationsAreRecordedAndANewerSchemaIsRefused() async throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        let store = try SQLiteRuntimeStateStore(path: path)
        #expect(try store.schemaVersion == SQLiteStateSchema.schema.migrations.count)
        #expect(try await store.integrityCheck() == ["ok"])
        // Reopening applies nothing twice.
        #expect(try SQLiteRuntimeStateStore(path: path).schemaVersion == SQLiteStateSchema.schema.migrations.count)
        // A migration this build does not know, as a newer version would record it.
        try store.database.withConnection { connection throws(SQLiteStoreError) in
            try connection.run("INSERT INTO codex_migrations(position, name, applied_at) VALUES (99, 'from_the_future', 0)")
        }
        let error = #expect(throws: SQLiteStoreError.self) { try SQLiteRuntimeStateStore(path: path) }
        #expect(error?.code == .schemaTooNew)
        #expect(error?.description.contains("from_the_future") == true)
    }

    @Test func aFailedMigrationNamesItselfTheFileAndSQLitesReason() async throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        do {
            let store = try SQLiteRuntimeStateStore(path: path)
            // The ledger's migration forgotten while its table stays: applying it again fails.
            try store.database.withConnection { connection throws(SQLiteStoreError) in
                try connection.run("DELETE FROM codex_migrations WHERE name = 'create_usage_records'")
            }
        }
        let error = #expect(throws: SQLiteStoreError.self) { try SQLiteRuntimeStateStore(path: path) }
        #expect(error?.code == .failure)
        #expect(error?.message == "migration 4 (create_usage_records) failed on \(path): a statement failed (table usage_records already exists)")
    }

    @Test func aFileThatIsNotADatabaseIsATypedErrorAndIsKept() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: SQLiteStoreError.self) { try SQLiteRuntimeStateStore(path: path) }
        #expect(error?.code == .corrupt)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    @Test func aTruncatedDatabaseIsATypedErrorAndIsKept() async throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        do {
            let store = try SQLiteRuntimeStateStore(path: path)
            let thread = AgentThread()
            try await store.upsertThread(thread)
            for index in 0..<50 {
                try await store.appendHistory(RuntimeStateStoreConformance.sampleHistory(thread: thread.id, turn: AgentTurnID(), index: index), to: thread.id)
            }
        }
        // Fold the WAL into the main file, then cut the file in half.
        let checkpoint = try SQLiteRuntimeStateStore(path: path)
        try checkpoint.database.withConnection { connection throws(SQLiteStoreError) in try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        let url = URL(fileURLWithPath: path)
        let whole = try Data(contentsOf: url)
        let half = whole.prefix(whole.count / 2)
        Self.remove(path)
        try half.write(to: url)
        let reopened = Result { try SQLiteRuntimeStateStore(path: path) }
        switch reopened {
        case .failure(let error as SQLiteStoreError):
            #expect(error.code == .corrupt)
        case .failure(let error):
            Issue.record("untyped error \(error)")
        case .success(let store):
            // SQLite may open a truncated file lazily: the damage must then surface as a typed error.
            let check = try? await store.integrityCheck()
            let read = await #expect(throws: SQLiteStoreError.self) {
                for thread in try await store.threads() { _ = try await store.history(of: thread.id, query: .init(limit: 10_000)) }
                if check != ["ok"] { throw SQLiteStoreError(code: .corrupt, message: "integrity check failed") }
            }
            #expect(read?.code == .corrupt)
        }
        #expect(try Data(contentsOf: url) == half)
    }

    static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

@Suite struct SQLiteReplayIntegrityTests {
    @Test func aStoredHistoryCutMidToolCallIsRefusedNotSent() async throws {
        let store = try SQLiteRuntimeStateStore(path: ":memory:")
        let thread = AgentThread()
        try await store.upsertThread(thread)
        let complete = RuntimeStateStoreConformance.sampleHistory(thread: thread.id, turn: AgentTurnID())
        try await store.appendHistory(complete, to: thread.id)
        #expect(try await store.replayableHistory(of: thread.id) == complete)
        // The next turn was interrupted after its tool call was stored, before its result.
        let cut = Array(RuntimeStateStoreConformance.sampleHistory(thread: thread.id, turn: AgentTurnID(), index: 1).prefix(3))
        try await store.appendHistory(cut, to: thread.id)
        let error = await #expect(throws: AgentRuntimeError.self) { try await store.replayableHistory(of: thread.id) }
        #expect(error?.code == .historyReplayInvalid)
        #expect(error?.message == "history item 8: a tool call has no result")
    }
}

@Suite struct SQLiteEdgeCaseTests {
    @Test func hugeLimitsBadCursorsAndNULBytesAreHandled() async throws {
        let store = try SQLiteRuntimeStateStore(path: ":memory:")
        let plain = AgentThread(id: AgentThreadID(rawValue: "a"))
        let withNUL = AgentThread(id: AgentThreadID(rawValue: "a\0x"))
        try await store.upsertThread(plain)
        try await store.upsertThread(withNUL)
        try await store.appendHistory(RuntimeStateStoreConformance.sampleHistory(thread: plain.id, turn: AgentTurnID()), to: plain.id)
        #expect(try await store.threads().count == 2)
        #expect(try await store.thread(withNUL.id)?.id == withNUL.id)
        #expect(try await store.history(of: withNUL.id, query: .init()).items.isEmpty)
        let all = try await store.history(of: plain.id, query: AgentHistoryQuery(limit: .max))
        #expect(all.items.count == 6)
        #expect(all.nextCursor == nil)
        let error = await #expect(throws: SQLiteStoreError.self) {
            try await store.history(of: plain.id, query: AgentHistoryQuery(cursor: "not-a-cursor"))
        }
        #expect(error?.message.contains("cursor") == true)
    }

    /// A store in memory with thread `t` and the sample history (six items), then `statements` run on it.
    private static func storeWithHistory(damagedBy statements: [String]) async throws -> (SQLiteRuntimeStateStore, AgentThread) {
        let store = try SQLiteRuntimeStateStore(path: ":memory:")
        let thread = AgentThread(id: AgentThreadID(rawValue: "t"))
        try await store.upsertThread(thread)
        try await store.appendHistory(RuntimeStateStoreConformance.sampleHistory(thread: thread.id, turn: AgentTurnID()), to: thread.id)
        try store.database.withConnection { connection throws(SQLiteStoreError) in
            for statement in statements { try connection.run(statement) }
        }
        return (store, thread)
    }

    /// A position that is not a whole number once made the next page start at the same row forever
    /// (`threads show` spun, `threads export` wrote without end) while the deep check saw nothing.
    @Test func aHistoryPositionThatIsNotAWholeNumberIsDamageNotALoop() async throws {
        for damage in ["'abc'", "3.5", "0", "-2"] {
            let (store, thread) = try await Self.storeWithHistory(damagedBy: ["UPDATE history_items SET position = \(damage) WHERE thread_id = 't' AND position = 3"])
            let report = try await store.check()
            let expectedKey = damage == "'abc'" ? "t/abc" : damage == "3.5" ? "t/3.5" : "t/\(damage)"
            #expect(report.problems == [.init(table: "history_items", rowKey: expectedKey, message: "a history row's position is not a whole number above 0")], "\(damage)")
            if damage == "'abc'" || damage == "3.5" {
                // Paged two at a time: the damaged row is named where a page reaches it, never stepped
                // around forever. (Text sorts above every number in SQLite, so reading backward from the
                // end never reaches 'abc': that page sequence ends with the other five items.)
                for direction in [AgentHistoryDirection.forward, .backward] {
                    var cursor: String?
                    var pages = 0
                    var items = 0
                    var failure: SQLiteStoreError?
                    do {
                        repeat {
                            let page = try await store.history(of: thread.id, query: AgentHistoryQuery(limit: 2, direction: direction, cursor: cursor))
                            cursor = page.nextCursor
                            items += page.items.count
                            pages += 1
                        } while cursor != nil && pages < 10
                    } catch let error as SQLiteStoreError {
                        failure = error
                    }
                    #expect(pages < 10, "\(damage) \(direction)")
                    if damage == "'abc'" && direction == .backward {
                        #expect(failure == nil)
                        #expect(items == 5)
                    } else {
                        #expect(failure?.code == .rowUndecodable, "\(damage) \(direction)")
                        #expect(failure?.rowKey == expectedKey)
                    }
                }
            }
        }
    }

    /// Orphans in tables without row IDs were reported as "rowid 0"; they are named by their key.
    @Test func orphansAreNamedByTheirKey() async throws {
        let (store, _) = try await Self.storeWithHistory(damagedBy: [
            "PRAGMA foreign_keys = OFF",
            "INSERT INTO history_items SELECT 'ghost', position, kind, body FROM history_items WHERE thread_id = 't' AND position IN (2, 4)",
            "INSERT INTO approvals (id, thread_id, requested_at, body) VALUES ('appr-1', 'ghost', 0, x'7b7d')",
            "PRAGMA foreign_keys = ON",
        ])
        let report = try await store.check()
        let orphans = report.problems.filter { $0.message.hasPrefix("the row refers to") }
        #expect(orphans == [
            .init(table: "approvals", rowKey: "rowid 1", message: "the row refers to a missing threads row"),
            .init(table: "history_items", rowKey: "ghost/2", message: "the row refers to a missing threads row"),
            .init(table: "history_items", rowKey: "ghost/4", message: "the row refers to a missing threads row"),
        ], "\(orphans)")
    }
}
