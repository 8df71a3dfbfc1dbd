import CodexCore
@testable import CodexStorageSQLite
import Foundation
import Testing

/// A memory store written before importance was indexed (`Fixtures/memory-v1.sqlite`, written by the
/// store at schema version 1: five records in two namespaces, one archived) upgrades in place to the
/// current schema, and reads the same before and after.
@Suite struct SQLiteMemoryMigrationTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures").appendingPathComponent("memory-v1.sqlite")

    private static func copy() throws -> (directory: URL, path: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("memory-migration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("memory.sqlite").path
        try FileManager.default.copyItem(atPath: fixture.path, toPath: path)
        return (directory, path)
    }

    private static func ids(_ result: MemorySearchResult) -> [String] { result.hits.map(\.record.id.rawValue) }

    @Test func aVersionOneStoreIsRefusedForReadingAndUpgradedForWriting() async throws {
        let (directory, path) = try Self.copy()
        defer { try? FileManager.default.removeItem(at: directory) }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        // Looking never writes: reading an outdated store is refused, and the file is untouched.
        let refused = #expect(throws: MemoryStoreError.self) { try SQLiteMemoryStore(readingAt: path) }
        #expect(refused?.code == .schemaOutdated)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["memory.sqlite"])

        let store = try SQLiteMemoryStore(path: path)
        #expect(try store.schemaVersion == 3)
        #expect(try await store.integrityCheck() == ["ok"])
        // Every record is still there, unchanged, and each full-text row carries its importance.
        let all = try await store.list(MemoryListQuery(namespace: "shop", includeArchived: true))
        #expect(all.map(\.id.rawValue).sorted() == ["m-allergy", "m-archived", "m-delivery", "m-invoice"])
        #expect(all.first { $0.id == "m-delivery" }?.evidence == ["said so on the phone"])
        let levels = try store.database.withConnection { connection throws(SQLiteStoreError) in
            var levels: [Int64: String] = [:]
            try connection.run("SELECT rowid, level FROM memory_fts ORDER BY rowid") { row throws(SQLiteStoreError) in levels[row.integer(0)] = row.text(1) }
            return levels
        }
        #expect(levels == [1: "importance3", 2: "importance9", 3: "importance9", 4: "importance10", 5: "importance5"])

        // Searches rank as before: importance first (the two 9s by relevance, then the 3), the archived
        // record and the other namespace left out.
        let asOf = Date(timeIntervalSince1970: 1_800_001_000)
        let delivery = try await store.search(MemoryQuery(namespace: "shop", text: "delivery", asOf: asOf))
        #expect(Self.ids(delivery).count == 3)
        #expect(Set(Self.ids(delivery).prefix(2)) == ["m-invoice", "m-allergy"])
        #expect(Self.ids(delivery).last == "m-delivery")
        #expect(Self.ids(try await store.search(MemoryQuery(namespace: "garage", text: "delivery", asOf: asOf))) == ["m-other"])

        // New writes index their importance; an update that changes it moves the record's level.
        try await store.upsert(MemoryRecord(id: "m-new", namespace: "shop", summary: "Delivery before noon, please.", importance: 10, createdAt: asOf))
        #expect(Self.ids(try await store.search(MemoryQuery(namespace: "shop", text: "delivery", asOf: asOf))).first == "m-new")
        try await store.upsert(MemoryRecord(id: "m-new", namespace: "shop", summary: "Delivery before noon, please.", importance: 0, createdAt: asOf))
        #expect(Self.ids(try await store.search(MemoryQuery(namespace: "shop", text: "delivery", asOf: asOf))).last == "m-new")
        // Reading it now works.
        #expect(try SQLiteMemoryStore(readingAt: path).schemaVersion == 3)
    }

    /// A store written at schema version 2 indexed raw text, which FTS5 folds differently from the
    /// queries (it keeps `İ`): `İstanbul` was found by no spelling. Opening it for writing rebuilds the
    /// index from the records, in the form queries use.
    @Test func aVersionTwoStoreIsReindexedInTheFormQueriesUse() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("memory-v2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("memory.sqlite").path
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        do {
            let store = try SQLiteMemoryStore(path: path)
            try await store.upsert(MemoryRecord(id: "office", namespace: "n", summary: "The office is in İstanbul.", importance: 7, createdAt: at))
            try await store.upsert(MemoryRecord(id: "plain", namespace: "n", summary: "Nothing here.", importance: 2, createdAt: at))
            // Back to what version 2 wrote: the raw summary and evidence, and no migration 3.
            try store.database.withConnection { connection throws(SQLiteStoreError) in
                try connection.execute("""
                    DELETE FROM memory_fts;
                    INSERT INTO memory_fts(rowid, summary, evidence, level)
                        SELECT key, json_extract(CAST(body AS TEXT), '$.summary'), '', 'importance' || importance FROM memory_records;
                    DELETE FROM memory_migrations WHERE position = 3;
                    """)
            }
            #expect(try await store.search(MemoryQuery(namespace: "n", text: "istanbul", asOf: at)).hits.isEmpty, "the version 2 index misses it")
        }
        #expect(throws: MemoryStoreError.self) { try SQLiteMemoryStore(readingAt: path) }
        let upgraded = try SQLiteMemoryStore(path: path)
        #expect(try upgraded.schemaVersion == 3)
        for spelling in ["İstanbul", "istanbul", "ISTANBUL", "İSTANBUL"] {
            #expect(Self.ids(try await upgraded.search(MemoryQuery(namespace: "n", text: spelling, asOf: at))) == ["office"], "\(spelling)")
        }
        #expect(Self.ids(try await upgraded.search(MemoryQuery(namespace: "n", text: "nothing", asOf: at))) == ["plain"])
        #expect(try await upgraded.integrityCheck() == ["ok"])
    }

    @Test func theLevelColumnIsNeverMatchedByText() async throws {
        let store = try SQLiteMemoryStore(path: ":memory:")
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        try await store.upsert(MemoryRecord(id: "plain", namespace: "n", summary: "Nothing about levels.", importance: 9, createdAt: at))
        try await store.upsert(MemoryRecord(id: "literal", namespace: "n", summary: "The word importance9 appears here.", importance: 2, createdAt: at))
        for match in [MemoryQuery.MatchPolicy.anyToken, .allTokens] {
            for ranking in [MemoryQuery.Ranking.importanceThenRecency, .recencyThenImportance] {
                let query = MemoryQuery(namespace: "n", text: "importance9 level", match: match, ranking: ranking, asOf: at)
                let found = try await store.search(query).hits.map(\.record.id.rawValue)
                #expect(found == (match == .anyToken ? ["literal"] : []), "\(match) \(ranking)")
            }
        }
    }

    @Test func bothStoresScoreTheSameRelevance() async throws {
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        let records = [
            ("a", "Delivery on Tuesday, delivery notes by email.", 5), ("b", "Invoices by email.", 5), ("c", "Notes about the van.", 5),
            ("d", "Delivery before noon please, the delivery door is at the back, ring twice.", 7), ("e", "Nothing to see.", 1),
        ].map { MemoryRecord(id: MemoryRecordID(rawValue: $0.0), namespace: "n", summary: $0.1, importance: $0.2, createdAt: at) }
        let sqlite = try SQLiteMemoryStore(path: ":memory:")
        let memory = InMemoryMemoryStore()
        for record in records {
            try await sqlite.upsert(record)
            try await memory.upsert(record)
        }
        for text in ["delivery notes", "email", "delivery van door"] {
            let query = MemoryQuery(namespace: "n", text: text, asOf: at)
            let fromSQLite = try await sqlite.search(query).hits
            let fromMemory = try await memory.search(query).hits
            #expect(fromSQLite.map(\.record.id) == fromMemory.map(\.record.id), "\(text)")
            for (left, right) in zip(fromSQLite, fromMemory) {
                #expect(abs((left.explanation.relevance ?? 0) - (right.explanation.relevance ?? 1)) < 1e-9, "\(text): \(left.record.id)")
            }
        }
    }
}
