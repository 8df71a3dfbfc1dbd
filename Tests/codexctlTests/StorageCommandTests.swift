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

        let export = try await CommandRunner.codexctl(["threads", "export", id, "--db", path])
        let lines = export.stdout.split(separator: "\n")
        #expect(lines.count == 6)
        #expect(try lines.allSatisfy { line in if case .object = try JSONValue(parsing: String(line)) { true } else { false } })

        let check = try await CommandRunner.codexctl(["db", "check", "--db", path, "--json"])
        #expect(check.status == 0, "\(check.stderr)")
        let checked = try JSONValue(parsing: check.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(checked["integrity"] == .array(["ok"]))
        #expect(checked["schemaVersion"] == 2)

        #expect(try await CommandRunner.codexctl(["threads", "delete", id, "--db", path]).stdout == "deleted\n")
        #expect(try await CommandRunner.codexctl(["threads", "list", "--db", path]).stdout == "0 threads\n")
        let missing = try await CommandRunner.codexctl(["threads", "show", id, "--db", path])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("thread_not_found"))
    }

    @Test func usageAndCorruptFiles() async throws {
        #expect(try await CommandRunner.codexctl(["threads", "list"]).status == 64)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-bad-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(repeating: 0x5A, count: 4096).write(to: URL(fileURLWithPath: path))
        let check = try await CommandRunner.codexctl(["db", "check", "--db", path])
        #expect(check.status == 1)
        #expect(check.stderr.contains("sqlite_corrupt"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(repeating: 0x5A, count: 4096))
    }
}
