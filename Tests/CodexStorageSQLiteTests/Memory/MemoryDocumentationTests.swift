import CodexCore
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// Every Swift example of Docs/Memory.md, compiled and run as written: each sits between `// example N`
/// and `// end` below, and a test checks that the page shows exactly these texts (in any order).
@Suite struct MemoryDocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theExamplesOfTheMemoryPageRunAsWritten() async throws {
        let directory = try temporaryDirectory("memory-docs")
        defer { try? FileManager.default.removeItem(at: directory) }

        // example 1
        let memory = try SQLiteMemoryStore(path: directory.appendingPathComponent("memory.sqlite").path)
        let record = MemoryRecord(
            namespace: "shop", scope: .user, category: .preference,
            summary: "Prefers delivery on Tuesdays.", tags: ["delivery"], dedupeKey: "delivery-day"
        )
        try await memory.upsert(record)
        let result = try await memory.search(MemoryQuery(namespace: "shop", text: "Tuesdays delivery", match: .allTokens))
        for hit in result.hits {
            print(hit.record.summary, hit.explanation.matchedTokens, hit.explanation.rank)
        }
        // end
        #expect(result.hits.map(\.explanation.matchedTokens) == [["tuesdays", "delivery"]])

        // example 2
        let updated = MemoryRecord(
            namespace: "shop", scope: .user, category: .preference,
            summary: "Prefers delivery on Fridays.", dedupeKey: "delivery-day"
        )
        let outcome = try await memory.upsert(updated)
        if case .replaced(let previous, let stored) = outcome {
            print(previous.summary, "->", stored.summary, stored.id == previous.id)
        }
        // end
        #expect(outcome.stored.id == record.id)

        // example 3
        do {
            try await memory.upsert(MemoryRecord(namespace: "shop", summary: String(repeating: "x", count: 20_000)))
        } catch {
            print(error.code, error.limit?.rawValue ?? "")  // memory_record_invalid summary_bytes
        }
        // end

        // example 4
        let reader = try SQLiteMemoryStore(readingAt: directory.appendingPathComponent("memory.sqlite").path)
        let query = MemoryQuery(
            namespace: "shop", text: "delivery", scopes: [.user], ranking: .recencyThenImportance,
            budget: MemoryReadBudget(records: 4, characters: 800)
        )
        let found = try await reader.search(query)
        print(found.hits.count, found.omittedByBudget)
        // end
        #expect(found.records.map(\.summary) == ["Prefers delivery on Fridays."])
    }

    @Test func thePageShowsExactlyTheExamplesThatRun() throws {
        let page = try String(contentsOf: Self.root.appendingPathComponent("Docs/Memory.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        // The page's runtime section ("## Memory in turns") is run by the runtime's documentation tests.
        let documented = DocumentationExamples.swiftBlocks(inPage: page, before: "## Memory in turns")
        let tested = DocumentationExamples.examples(inSource: source)
        #expect(tested.count == 4)
        #expect(documented.sorted() == tested.sorted())
    }
}
