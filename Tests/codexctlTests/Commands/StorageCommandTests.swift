import CodexCore
import CodexSchema
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// `codexctl threads` and `codexctl db` against a real SQLite file.
@Suite struct StorageCommandTests {
    @Test func listShowExportCheckAndDelete() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-db-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let thread = AgentThread(title: "Order help")
        do {
            let store = try SQLiteRuntimeStateStore(path: path)
            try await store.upsertThread(thread)
            try await store.appendHistory(RuntimeStateStoreConformance.sampleHistory(thread: thread.id, turn: AgentTurnID()), to: thread.id)
            try await store.upsertTurn(AgentTurn(threadID: thread.id, status: .completed))
        }
        let id = thread.id.rawValue

        let list = try await CommandRunner.codexctl(["threads", "list", "--db", path, "--json"])
        #expect(list.status == 0, "\(list.stderr)")
        guard case .array(let threads) = try JSONValue(parsing: list.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            Issue.record("not an array")
            return
        }
        #expect(threads.count == 1)
        #expect(threads.first?["id"] == .string(id))

        let show = try await CommandRunner.codexctl(["threads", "show", id, "--db", path])
        #expect(show.stdout.contains("title    Order help"))
        #expect(show.stdout.contains("completed"))

        // JSON Lines of the documented shape: a type on every line, snake_case keys, no synthesized `_0`.
        let export = try await CommandRunner.codexctl(["threads", "export", id, "--db", path])
        #expect(export.status == 0, "\(export.stderr)")
        let lines = try export.stdout.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        #expect(lines.compactMap { $0["type"]?.stringValue } == ["message", "reasoning", "tool_call", "tool_result", "message", "system_event"])
        #expect(lines[0]["role"] == "user" && lines[0]["text"] == "Where is order 0?" && lines[0]["created_at"] == "2027-01-15T08:00:00Z")
        #expect(lines[1] == ["type": "reasoning", "item_id": "rs_0", "summary": ["Look it up."], "has_encrypted_content": true])
        #expect(lines[2] == ["type": "tool_call", "call_id": "call_0", "tool": "lookup_order", "arguments": #"{"order":0}"#])
        #expect(lines[3] == ["type": "tool_result", "call_id": "call_0", "tool": "lookup_order", "status": "success", "content": [["type": "text", "text": "Order 0 ships Tuesday."]]])
        #expect(lines[4]["phase"] == "final_answer")
        #expect(lines[5]["event"] == "turn_completed")
        #expect(!export.stdout.contains("\"_0\":"))

        let markdown = try await CommandRunner.codexctl(["threads", "export", id, "--db", path, "--format", "markdown"])
        #expect(markdown.status == 0)
        #expect(markdown.stdout == """
            # Order help

            Thread `\(id)`, updated \(thread.updatedAt.formatted(.iso8601)).

            **user**

            > Where is order 0?

            > _thinking:_ Look it up.

            > tool call `lookup_order` `{"order":0}`

            > tool result (success): Order 0 ships Tuesday.

            **assistant**

            > It ships Tuesday.

            """)
        let badFormat = try await CommandRunner.codexctl(["threads", "export", id, "--db", path, "--format", "html"])
        #expect(badFormat.status == 64)
        #expect(badFormat.stderr.hasPrefix("Error: --format must be jsonl or markdown\n"))

        let check = try await CommandRunner.codexctl(["db", "check", "--db", path, "--json"])
        #expect(check.status == 0, "\(check.stderr)")
        let checked = try JSONValue(parsing: check.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(checked["integrity"] == .array(["ok"]))
        #expect(checked["schema_version"] == 4)

        #expect(try await CommandRunner.codexctl(["threads", "delete", id, "--db", path, "--json"]).stdout == #"{"deleted":"\#(id)"}"# + "\n")
        #expect(try await CommandRunner.codexctl(["threads", "list", "--db", path]).stdout == "0 threads\n")
        let missing = try await CommandRunner.codexctl(["threads", "show", id, "--db", path])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("thread_not_found"))
    }

    @Test func showMarksCompactionPointsAndExportKeepsTheRecord() async throws {
        let directory = try temporaryDirectory("codexctl-compaction")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state.sqlite").path
        let thread = AgentThread(title: "Long")
        let created = Date(timeIntervalSince1970: 1_800_000_000)
        do {
            let store = try SQLiteRuntimeStateStore(path: path)
            try await store.upsertThread(thread)
            try await store.appendHistory(RuntimeStateStoreConformance.sampleHistory(thread: thread.id, turn: AgentTurnID()), to: thread.id)
            let record = AgentContextCompaction(
                id: "c1", createdAt: created, strategy: .remote, replacedItemCount: 6, coversItemsBefore: 6,
                providerItems: [["type": "compaction", "encrypted_content": "enc"]], estimatedTokensBefore: 40, estimatedTokensAfter: 1
            )
            try await store.appendHistory([.contextCompaction(record)], to: thread.id)
        }
        let show = try await CommandRunner.codexctl(["threads", "show", thread.id.rawValue, "--db", path])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.hasSuffix("history  7 items\ncompacted at item 6 (remote, 2027-01-15T08:00:00Z): 6 items replaced, about 40 → 1 tokens\n"), "\(show.stdout)")
        let json = try JSONValue(parsing: Array(try await CommandRunner.codexctl(["threads", "show", thread.id.rawValue, "--db", path, "--json"]).stdout.utf8))
        #expect(json["history_items"] == 7)
        #expect(json["compactions"] == [[
            "id": "c1", "strategy": "remote", "created_at": "2027-01-15T08:00:00Z", "replaced_items": 6, "covers_items_before": 6, "estimated_tokens_before": 40,
            "estimated_tokens_after": 1, "summary": .null, "provider_items": 1, "position": 6,
        ]])
        let export = try await CommandRunner.codexctl(["threads", "export", thread.id.rawValue, "--db", path])
        #expect(export.stdout.split(separator: "\n").last.map(String.init).map { $0.contains(#""type":"compaction""#) } == true)
        let check = try await CommandRunner.codexctl(["db", "check", "--db", path])
        #expect(check.status == 0, "the deep check accepts a compaction row: \(check.stdout)")
    }

    @Test func usageAndCorruptFiles() async throws {
        // Without --db the default store is read, never created: with none there yet, that is an error naming it.
        let state = try temporaryDirectory("codexctl-state")
        defer { try? FileManager.default.removeItem(at: state) }
        let fresh = try await CommandRunner.codexctl(["threads", "list"], environment: ["XDG_STATE_HOME": state.path])
        #expect(fresh.status == 1)
        #expect(fresh.stderr == "Error: sqlite_not_found: cannot open \(state.path)/codexkit/state.sqlite: no such directory\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: state.path).isEmpty)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-bad-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(repeating: 0x5A, count: 4096).write(to: URL(fileURLWithPath: path))
        let check = try await CommandRunner.codexctl(["db", "check", "--db", path])
        #expect(check.status == 1)
        #expect(check.stderr.contains("sqlite_corrupt"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(repeating: 0x5A, count: 4096))
    }
}
