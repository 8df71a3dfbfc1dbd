import CodexCore
import CodexRecovery
import CodexSchema
@testable import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// Commands that only look never write: every input file of every inspection command keeps its bytes,
/// its mode and its neighbours (a checksum of the whole directory before and after), whatever it holds.
/// And what they print of stored or received data cannot drive the terminal.
@Suite struct InspectionCommandTests {
    final class Scratch {
        let url: URL
        var path: String { url.path }
        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-look-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(at: url) }
        func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    }

    /// Runs `arguments` and checks that nothing under `directory` changed.
    private func look(
        _ arguments: [String], at directory: String, environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> CommandResult {
        let before = DirectorySnapshot(directory)
        let result = try await CommandRunner.codexctl(arguments, environment: environment)
        #expect(DirectorySnapshot(directory).differences(from: before) == [], "\(arguments.joined(separator: " "))", sourceLocation: sourceLocation)
        return result
    }

    static let hostileTitle = "Orders\u{1B}[2J\u{1B}[31m\u{07}\u{202E}evil\r\nnext"

    private func populatedStore(_ scratch: Scratch) async throws -> (path: String, thread: AgentThread) {
        let path = scratch.path("state.sqlite")
        let thread = AgentThread(title: Self.hostileTitle)
        do {
            let store = try SQLiteRuntimeStateStore(path: path)
            try await store.upsertThread(thread)
            try await store.appendHistory(RuntimeStateStoreConformance.sampleHistory(thread: thread.id, turn: AgentTurnID()), to: thread.id)
            try await store.upsertTurn(AgentTurn(threadID: thread.id, status: .completed))
        }
        return (path, thread)
    }

    @Test func everyStateStoreInspectionLeavesEveryFileAsItWas() async throws {
        let scratch = try Scratch()
        let (path, thread) = try await populatedStore(scratch)
        let id = thread.id.rawValue
        for arguments in [
            ["threads", "list", "--db", path], ["threads", "list", "--db", path, "--json"], ["threads", "show", id, "--db", path],
            ["threads", "show", id, "--db", path, "--json"], ["threads", "export", id, "--db", path], ["db", "check", "--db", path],
            ["db", "check", "--db", path, "--quick", "--json"],
        ] {
            let result = try await look(arguments, at: scratch.path)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
    }

    @Test func aForeignMissingOrEmptyDatabaseIsAnErrorAndStaysAsItWas() async throws {
        let scratch = try Scratch()
        let foreign = scratch.path("other.sqlite")
        try Self.writeForeignDatabase(at: foreign)
        _ = FileManager.default.createFile(atPath: scratch.path("empty.sqlite"), contents: nil)
        for command in [["threads", "list"], ["threads", "show", "t-1"], ["db", "check"], ["threads", "export", "t-1"]] {
            let refused = try await look(command + ["--db", foreign], at: scratch.path)
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("sqlite_foreign_database"), "\(command): \(refused.stderr)")
            let missing = try await look(command + ["--db", scratch.path("nested/missing.sqlite")], at: scratch.path)
            #expect(missing.stderr == "Error: sqlite_not_found: cannot open \(scratch.path("nested/missing.sqlite")): no such directory\n")
            let empty = try await look(command + ["--db", scratch.path("empty.sqlite")], at: scratch.path)
            #expect(empty.stderr.contains("sqlite_not_found"), "\(empty.stderr)")
            #expect(empty.status == 1)
        }
    }

    /// Another application's database with a `threads` table of its own, written with SQLite directly.
    static func writeForeignDatabase(at path: String) throws {
        try SQLiteDatabaseFile(path: path).createPrivate()
        let connection = try SQLiteConnection(path: path, mode: .readWrite)
        try connection.execute("CREATE TABLE threads (x TEXT); INSERT INTO threads VALUES ('theirs')")
    }

    @Test func recoveryInspectionCreatesNoDirectoryChangesNoModeAndKeepsTheQuotaLedger() async throws {
        let scratch = try Scratch()
        let store = scratch.url.appendingPathComponent("recovery")
        let (binding, handles) = try await RecoveryCommandTests.prepared(2, in: store)
        chmod(store.path, 0o755)
        let common = ["--store", store.path, "--binding", binding]
        let id = handles[0].operationID.uuidString.lowercased()
        for arguments in [["recovery", "list"], ["recovery", "list", "--json"], ["recovery", "status", id], ["recovery", "status", id, "--json"]] {
            let result = try await look(arguments + common, at: scratch.path)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        let receipt = try await look(["recovery", "receipt", id] + common, at: scratch.path)
        #expect(receipt.stderr.contains("completion_unavailable"))

        let nested = scratch.path("a/b/c")
        let missing = try await look(["recovery", "list", "--store", nested, "--binding", binding], at: scratch.path)
        #expect(missing.status == 1)
        #expect(missing.stderr == "Error: store_not_found: no recovery store at \(nested) (errno 2)\n")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("a")))
    }

    @Test func oneHostileEntryIsReportedByItsPathAndTheRestIsListed() async throws {
        let scratch = try Scratch()
        let store = scratch.url.appendingPathComponent("recovery")
        let (binding, handles) = try await RecoveryCommandTests.prepared(2, in: store)
        let account = try #require(try FileManager.default.contentsOfDirectory(atPath: store.path).first { $0.hasPrefix("a") })
        let scope = try #require(try FileManager.default.contentsOfDirectory(atPath: store.path + "/" + account).first { $0.hasPrefix("s") })
        // A FIFO posing as a record and a symbolic link posing as a scope directory.
        let fifoID = UUID().uuidString.lowercased()
        #expect(mkfifo(store.path + "/\(account)/\(scope)/\(fifoID).json", 0o600) == 0)
        let linkedScope = "s" + String(repeating: "0", count: 32)
        try FileManager.default.createSymbolicLink(atPath: store.path + "/\(account)/\(linkedScope)", withDestinationPath: "/tmp")
        let result = try await look(["recovery", "list", "--json", "--store", store.path, "--binding", binding], at: scratch.path)
        #expect(result.status == 0, "\(result.stderr)")
        let listed = try JSONValue(parsing: result.stdout)
        #expect(listed["operations"] == .array(handles.map { .string($0.operationID.uuidString.lowercased()) }.sorted { $0.stringValue ?? "" < $1.stringValue ?? "" }))
        #expect(listed["unreadable"] == .array([.string(fifoID)]))
        let problems = listed["problems"]?.arrayValue ?? []
        #expect(problems.map { $0["path"]?.stringValue } == ["\(account)/\(scope)/\(fifoID).json", "\(account)/\(linkedScope)"].sorted().map(Optional.some))
        #expect(problems.allSatisfy { $0["code"] == "insecure_store" })
    }

    @Test func authStatusLooksAtTheSecretStoreWithoutTighteningOrCreatingIt() async throws {
        let scratch = try Scratch()
        let secrets = scratch.path("secrets")
        try FileManager.default.createDirectory(atPath: secrets, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        let noKey = ["OPENAI_API_KEY": ""]
        let status = try await look(["auth", "status", "--secrets", secrets, "--codex-home", scratch.path("codex")], at: scratch.path, environment: noKey)
        #expect(status.status == 1)
        #expect(status.stdout.hasPrefix("not signed in"))
        let missing = try await look(["auth", "status", "--secrets", scratch.path("none"), "--codex-home", scratch.path("codex")], at: scratch.path, environment: noKey)
        #expect(missing.status == 1)
    }

    @Test func titlesAndErrorBodiesCannotDriveTheTerminalWhileJSONStaysExact() async throws {
        let scratch = try Scratch()
        let (path, thread) = try await populatedStore(scratch)
        let list = try await CommandRunner.codexctl(["threads", "list", "--db", path])
        #expect(list.stdout.contains(#"Orders\u{1B}[2J\u{1B}[31m\u{7}\u{202E}evil\r\nnext"#), "\(list.stdout)")
        #expect(!list.stdout.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x202E })
        let show = try await CommandRunner.codexctl(["threads", "show", thread.id.rawValue, "--db", path])
        #expect(show.stdout.contains(#"title    Orders\u{1B}[2J"#))
        let json = try await CommandRunner.codexctl(["threads", "list", "--db", path, "--json"])
        let parsed = try JSONValue(parsing: json.stdout)
        #expect(parsed.arrayValue?.first?["title"] == .string(Self.hostileTitle), "JSON keeps the exact title")

        // An error body a server sends: its control characters are escaped on standard error.
        let server = try LoopbackHTTPServer(replies: [.json(#"{"error":{"code":"server_error","message":"boom\u001b[2J\u0007"}}"#, status: 500)])
        defer { server.shutdown() }
        let failing = try await CommandRunner.codexctl(
            ["models", "list", "--refresh", "--base-url", server.baseURL.absoluteString, "--secrets", scratch.path("no-secrets"), "--codex-home", scratch.path("no-codex")],
            environment: ["OPENAI_API_KEY": "sk-test-terminal"]
        )
        #expect(failing.status == 1)
        #expect(failing.stderr.contains(#"boom\u{1B}[2J\u{7}"#), "\(failing.stderr)")
        #expect(!failing.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
    }

    @Test func theDeepCheckReportsAMissingTableAndTheFirstBadRowByKey() async throws {
        let scratch = try Scratch()
        let (path, thread) = try await populatedStore(scratch)
        do {
            let connection = try SQLiteConnection(path: path, mode: .readWrite)
            try connection.execute("UPDATE history_items SET body = x'7b6e6f' WHERE position = 3")
        }
        // A command that reads the damaged row names it.
        let shown = try await CommandRunner.codexctl(["threads", "show", thread.id.rawValue, "--db", path])
        #expect(shown.status == 1)
        #expect(shown.stderr == "Error: sqlite_row_undecodable: a stored history item could not be decoded (table history_items, row \(thread.id.rawValue)/3)\n", "\(shown.stderr)")
        do {
            let connection = try SQLiteConnection(path: path, mode: .readWrite)
            try connection.execute("DROP TABLE turns")
        }
        let quick = try await CommandRunner.codexctl(["db", "check", "--db", path, "--quick"])
        #expect(quick.status == 0, "SQLite's own check sees nothing wrong: \(quick.stderr)")
        let deep = try await look(["db", "check", "--db", path], at: scratch.path)
        #expect(deep.status == 1)
        #expect(deep.stdout.contains("problem    turns: the table is missing"), "\(deep.stdout)")
        #expect(deep.stdout.contains("problem    history_items row \(thread.id.rawValue)/3: a stored history item could not be decoded"))
        let json = try JSONValue(parsing: try await CommandRunner.codexctl(["db", "check", "--db", path, "--json"]).stdout)
        #expect(json["healthy"] == false)
        #expect(json["problem_count"] == 2)
    }
}
