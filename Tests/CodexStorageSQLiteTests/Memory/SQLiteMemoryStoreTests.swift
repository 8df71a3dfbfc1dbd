import CodexCore
@testable import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// The memory store suite against a real file and `:memory:`, plus what only SQLite has: its own file
/// and schema, reopening, read-only opens, refusals with typed errors, and FTS5 input safety.
@Suite struct SQLiteMemoryStoreTests {
    private static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-memory-\(UUID().uuidString).sqlite").path
    }

    private static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    private static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    private static func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    private static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    private static func sample(_ id: String, _ summary: String) -> MemoryRecord {
        MemoryRecord(id: MemoryRecordID(rawValue: id), namespace: "test", summary: summary, tags: ["t"], dedupeKey: "key-\(id)", createdAt: t0)
    }

    @Test func theMemorySuitePassesOnAFile() async throws {
        var paths: [String] = []
        defer { for path in paths { Self.remove(path) } }
        let problems = try await MemoryStoreConformance.run {
            let path = Self.temporaryPath()
            paths.append(path)
            return try SQLiteMemoryStore(path: path)
        }
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func theMemorySuitePassesInMemory() async throws {
        let problems = try await MemoryStoreConformance.run { try SQLiteMemoryStore(path: ":memory:") }
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func reopeningKeepsRecordsAndTheFilesArePrivate() async throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        let record = Self.sample("kept", "Kept across opens.")
        do {
            let store = try SQLiteMemoryStore(path: path)
            #expect(try store.schemaVersion == SQLiteMemoryStore.currentSchemaVersion)
            try await store.upsert(record)
            #expect(try Self.mode(path) == 0o600)
            #expect(try Self.mode(path + "-wal") == 0o600)
            #expect(try Self.mode(path + "-shm") == 0o600)
        }
        let reopened = try SQLiteMemoryStore(path: path)
        #expect(try reopened.schemaVersion == 3)
        #expect(try await reopened.record("kept") == record)
        #expect(try await reopened.search(MemoryQuery(namespace: "test", text: "across", asOf: Self.t0)).records == [record])
        #expect(try await reopened.integrityCheck() == ["ok"])
        let journal = try reopened.database.withConnection { connection throws(SQLiteStoreError) in
            var mode = ""
            try connection.run("PRAGMA journal_mode") { row throws(SQLiteStoreError) in mode = row.text(0) ?? "" }
            return mode
        }
        #expect(journal == "wal")
    }

    @Test func aReadOnlyOpenCreatesAndChangesNothing() async throws {
        let directory = try temporaryDirectory("memory-readonly")
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("missing.sqlite").path
        let error = #expect(throws: MemoryStoreError.self) { try SQLiteMemoryStore(readingAt: missing) }
        #expect(error?.code == .notFound)
        #expect(error?.message == "cannot open \(missing): no such file")
        #expect(!Self.exists(missing))

        let path = directory.appendingPathComponent("memory.sqlite").path
        do {
            let store = try SQLiteMemoryStore(path: path)
            try await store.upsert(Self.sample("one", "Read me."))
            try store.checkpoint()
        }
        #expect(!Self.exists(path + "-wal"))
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let reader = try SQLiteMemoryStore(readingAt: path)
        #expect(reader.isReadOnly)
        #expect(try await reader.list(MemoryListQuery(namespace: "test", asOf: Self.t0)).map(\.id) == ["one"])
        #expect(try await reader.search(MemoryQuery(namespace: "test", text: "read", asOf: Self.t0)).hits.count == 1)
        let refused = await #expect(throws: MemoryStoreError.self) { try await reader.upsert(Self.sample("two", "No.")) }
        #expect(refused?.code == .writeRefused)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)

        let empty = directory.appendingPathComponent("empty.sqlite").path
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        #expect(throws: MemoryStoreError.self) { try SQLiteMemoryStore(readingAt: empty) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: empty)).isEmpty)
    }

    @Test func deletesOnAReadOnlyStoreAreRefused() async throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        do { try await SQLiteMemoryStore(path: path).upsert(Self.sample("one", "Stay.")) }
        let reader = try SQLiteMemoryStore(readingAt: path)
        let deleted = await #expect(throws: MemoryStoreError.self) { try await reader.delete("one") }
        #expect(deleted?.code == .writeRefused)
        let archived = await #expect(throws: MemoryStoreError.self) { try await reader.archive("one", at: Self.t0) }
        #expect(archived?.code == .writeRefused)
        #expect(try await reader.record("one")?.summary == "Stay.")
    }

    @Test func theMemoryFileAndTheStateStoreFileRefuseEachOther() async throws {
        let state = Self.temporaryPath()
        let memory = Self.temporaryPath()
        defer { Self.remove(state); Self.remove(memory) }
        _ = try SQLiteRuntimeStateStore(path: state)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: state))
        let error = #expect(throws: MemoryStoreError.self) { try SQLiteMemoryStore(path: state) }
        #expect(error?.code == .foreignDatabase)
        #expect(#expect(throws: MemoryStoreError.self) { try SQLiteMemoryStore(readingAt: state) }?.code == .foreignDatabase)
        #expect(try Data(contentsOf: URL(fileURLWithPath: state)) == bytes)
        _ = try SQLiteMemoryStore(path: memory)
        #expect(#expect(throws: SQLiteStoreError.self) { try SQLiteRuntimeStateStore(path: memory) }?.code == .foreignDatabase)
    }

    @Test func aFileThatIsNotADatabaseIsATypedErrorAndIsKept() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: MemoryStoreError.self) { try SQLiteMemoryStore(path: path) }
        #expect(error?.code == .corrupt)
        #expect((error?.underlying as? SQLiteStoreError)?.code == .corrupt)
        #expect(#expect(throws: MemoryStoreError.self) { try SQLiteMemoryStore(readingAt: path) }?.code == .corrupt)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    @Test func aStoreWithoutItsFullTextTableIsATypedError() async throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        do {
            let store = try SQLiteMemoryStore(path: path)
            try await store.upsert(Self.sample("one", "Indexed."))
            try store.database.withConnection { connection throws(SQLiteStoreError) in try connection.execute("DROP TABLE memory_fts") }
        }
        let error = #expect(throws: MemoryStoreError.self) { try SQLiteMemoryStore(path: path) }
        #expect(error?.code == .corrupt)
        #expect(error?.message == "\(path) is a memory store without its memory_fts table")
        #expect(#expect(throws: MemoryStoreError.self) { try SQLiteMemoryStore(readingAt: path) }?.code == .corrupt)
    }

    @Test func aNewerSchemaIsRefused() async throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        do {
            let store = try SQLiteMemoryStore(path: path)
            try store.database.withConnection { connection throws(SQLiteStoreError) in
                try connection.run("INSERT INTO memory_migrations(position, name, applied_at) VALUES (99, 'from_the_future', 0)")
            }
        }
        #expect(#expect(throws: MemoryStoreError.self) { try SQLiteMemoryStore(path: path) }?.code == .schemaTooNew)
        #expect(#expect(throws: MemoryStoreError.self) { try SQLiteMemoryStore(readingAt: path) }?.code == .schemaTooNew)
    }

    @Test func aSQLiteWithoutFTS5IsRefusedBeforeAnyFileIsTouched() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        // The probe's module name is the only difference: a SQLite without FTS5 answers "no such module".
        let error = #expect(throws: MemoryStoreError.self) { try SQLiteMemoryStore(path: path, fullTextModule: "fts5_not_compiled_in") }
        #expect(error?.code == .fullTextUnavailable)
        #expect((error?.underlying as? SQLiteStoreError)?.message == "a statement failed")
        #expect(!Self.exists(path))
        #expect(#expect(throws: MemoryStoreError.self) { try SQLiteMemoryStore(readingAt: path, fullTextModule: "fts5_not_compiled_in") }?.code == .fullTextUnavailable)
        #expect(!Self.exists(path))
    }

    @Test func hostileTextReachesFTS5OnlyAsQuotedTokens() async throws {
        let store = try SQLiteMemoryStore(path: ":memory:")
        try await store.upsert(Self.sample("near", "NEAR summary OR NOT apple."))
        for text in MemoryStoreConformance.hostileTexts {
            let plan = SQLiteMemorySearchPlan(MemoryQuery(namespace: "test", text: text, asOf: Self.t0))
            let tokens = MemoryText.tokens(text)
            if !tokens.isEmpty {
                // One statement per importance level, highest first; the text only as quoted tokens,
                // confined to the record's text columns.
                let quoted = tokens.map { "\"" + $0 + "\"" }.joined(separator: " OR ")
                let matches = plan.steps.map { step -> String? in
                    if case .text(let match) = step.bindings.first { return match }
                    return nil
                }
                #expect(matches == (0...10).reversed().map { "({summary evidence} : (\(quoted))) AND level : importance\($0)" })
            } else {
                #expect(plan.steps.count == 1 && !(plan.steps.first?.sql.contains("MATCH") ?? true), "\(text.prefix(20).debugDescription)")
            }
            // The SQL itself never depends on the text: it is the SQL of a plain one-word query, or of none.
            let plain = SQLiteMemorySearchPlan(MemoryQuery(namespace: "test", text: tokens.isEmpty ? nil : "word", asOf: Self.t0))
            #expect(plan.steps.map(\.sql) == plain.steps.map(\.sql), "\(text.prefix(20).debugDescription)")
        }
        // The same texts given raw to FTS5 are syntax: several fail to parse, which is what quoting prevents.
        var failures = 0
        for text in ["\"unterminated", "NEAR(apple", "apple AND", "(apple", "summary:", "-apple"] {
            do {
                try store.database.withConnection { connection throws(SQLiteStoreError) in
                    try connection.run("SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?", [.text(text)])
                }
            } catch {
                failures += 1
            }
        }
        #expect(failures == 6)
        let found = try await store.search(MemoryQuery(namespace: "test", text: "NEAR(apple", match: .allTokens, asOf: Self.t0))
        #expect(found.hits.map(\.explanation.matchedTokens) == [["near", "apple"]])
    }
}
