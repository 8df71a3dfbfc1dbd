import CodexCore
import CodexSchema
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// `codexctl memory` and `codexctl bench memory` against real store files.
@Suite struct MemoryCommandTests {
    static func store(_ directory: URL) async throws -> String {
        let path = directory.appendingPathComponent("memory.sqlite").path
        let store = try SQLiteMemoryStore(path: path)
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        try await store.upsert(MemoryRecord(id: "a", namespace: "cli", scope: .user, summary: "Ship on Tuesday.", importance: 7, tags: ["ship"], createdAt: t0))
        try await store.upsert(MemoryRecord(id: "b", namespace: "cli", scope: .project, summary: "NEAR(summary: OR *", importance: 3, createdAt: t0.addingTimeInterval(1)))
        return path
    }

    @Test func listAndSearchPrintSnakeCaseJSONAndExplainMatches() async throws {
        let directory = try temporaryDirectory("memory-cli")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try await Self.store(directory)
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()

        let list = try await CommandRunner.codexctl(["memory", "list", "--db", path, "--namespace", "cli", "--json"])
        #expect(list.status == 0, "\(list.stderr)")
        let records = try #require(try JSONValue(parsing: Array(list.stdout.utf8)).arrayValue)
        #expect(records.map { $0["id"]?.stringValue } == ["b", "a"])
        #expect(records[1]["related_ids"] == .array([]))
        #expect(records[1]["archived"] == .bool(false))
        #expect(records[1]["created_at"]?.stringValue == "2027-01-15T08:00:00Z")

        let search = try await CommandRunner.codexctl(["memory", "search", "near summary: tuesday", "--db", path, "--namespace", "cli", "--json", "--tag", "ship"])
        #expect(search.status == 0, "\(search.stderr)")
        let result = try JSONValue(parsing: Array(search.stdout.utf8))
        #expect(result["candidates"] == .number(1))
        #expect(result["omitted_by_budget"] == .number(0))
        let hit = try #require(result["hits"]?.arrayValue?.first)
        #expect(hit["record"]?["id"]?.stringValue == "a")
        #expect(hit["explanation"]?["matched_tokens"] == .array([.string("tuesday")]))
        #expect(hit["explanation"]?["matched_tags"] == .array([.string("ship")]))
        #expect(hit["explanation"]?["rank"] == .number(1))

        // Hostile text is only words: all three words are in record b.
        let hostile = try await CommandRunner.codexctl(["memory", "search", "NEAR(summary: OR", "--match", "all", "--db", path, "--namespace", "cli"])
        #expect(hostile.status == 0, "\(hostile.stderr)")
        #expect(hostile.stdout.hasPrefix("1. b  importance 3  relevance "))
        #expect(hostile.stdout.contains("  words near, summary, or\n   NEAR(summary: OR *\n1 hit (1 ranked, 0 over the budget)\n"))
        // Read-only: nothing new next to the store.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)

        let usage = try await CommandRunner.codexctl(["memory", "search", "x", "--db", path, "--match", "some"])
        #expect(usage.status == 64)
        #expect(usage.stderr.hasPrefix("Error: --match must be any, all or a positive number\n"))
        let invalid = try await CommandRunner.codexctl(["memory", "search", "x", "--db", path, "--limit", "300", "--json"])
        // Over its limit, a usage error found before the store is opened.
        #expect(invalid.status == 64)
        #expect(invalid.stdout.hasPrefix(#"{"error":{"code":"usage","message":"--limit must be a whole number from 1 to 256","#), "\(invalid.stdout)")
    }

    @Test func deleteNeverCreatesAMissingStore() async throws {
        let directory = try temporaryDirectory("memory-cli-delete")
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("missing.sqlite").path
        let result = try await CommandRunner.codexctl(["memory", "delete", "a", "--db", missing])
        #expect(result.status == 1)
        #expect(result.stderr == "Error: memory_store_not_found: cannot open \(missing): no such file\n")
        #expect(!FileManager.default.fileExists(atPath: missing))
        let path = try await Self.store(directory)
        let deleted = try await CommandRunner.codexctl(["memory", "delete", "a", "--db", path, "--json"])
        #expect(deleted.stdout == #"{"deleted":"a"}"# + "\n")
        #expect(try await SQLiteMemoryStore(readingAt: path).record("a") == nil)
    }

    @Test func theMemoryBenchComparesWithTheRawStatement() async throws {
        let result = try await CommandRunner.codexctl(["bench", "memory", "--json", "--records", "500", "--queries", "20"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONValue(parsing: Array(result.stdout.utf8))
        #expect(object["suite"]?.stringValue == "memory")
        let results = object["results"]?.arrayValue ?? []
        #expect(results.map { $0["name"]?.stringValue ?? "" } == ["fill", "database", "search p50", "search p99", "search p50", "search p99"])
        #expect(results[2]["baseline"]?["name"]?.stringValue == "raw FTS5 statement (same SQL, bare prepared statement)")
        #expect(results[2]["mode"]?.stringValue == "any of 2-4 words, 500 records")
    }
}
