import CodexCore
import CodexRecovery
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// `codexctl recovery` against a real store holding operations prepared through the public API.
@Suite struct RecoveryCommandTests {
    private static let format = AgentStructuredOutputFormat(
        name: "verdict", rawSchema: ["type": "object", "properties": ["ok": ["type": "boolean"]], "required": ["ok"]]
    )

    static func prepared(_ count: Int, in directory: URL) async throws -> (binding: String, handles: [AgentStructuredRecoveryHandle]) {
        let auth = APIKeyAuthProvider(apiKey: "sk-cli-test")
        let store = try AgentStructuredRecoveryStore(directory: directory)
        let recovery = AgentStructuredRecovery(configuration: .init(endpoint: .publicAPI), httpClient: DefaultHTTPClient(), authProvider: auth)
        var handles: [AgentStructuredRecoveryHandle] = []
        for index in 0..<count {
            handles.append(try await recovery.prepare(
                Request(text: "job \(index)", executionMode: .ephemeral), format: Self.format, model: .init(model: "gpt-6-astra"), store: store,
                options: .init(scope: "cli")
            ))
        }
        return (try await auth.credentials().binding, handles)
    }

    @Test func listStatusSuspendAbandonCleanupAndPurge() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-recovery-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (binding, handles) = try await Self.prepared(3, in: directory)
        let common = ["--store", directory.path, "--binding", binding]
        let ids = handles.map { $0.operationID.uuidString.lowercased() }

        let list = try await CommandRunner.codexctl(["recovery", "list", "--json"] + common)
        #expect(list.status == 0, "\(list.stderr)")
        let listed = try JSONValue(parsing: list.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(listed["operations"] == .array(ids.sorted().map(JSONValue.string)))
        #expect(listed["unreadable"] == .array([]))

        let status = try await CommandRunner.codexctl(["recovery", "status", ids[0], "--json"] + common)
        #expect(status.status == 0, "\(status.stderr)")
        let parsed = try JSONValue(parsing: status.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(parsed["state"] == "prepared")
        #expect(parsed["availability"] == "ready")
        #expect(parsed["maximum_attempts"] == 3)

        #expect(try await CommandRunner.codexctl(["recovery", "suspend", ids[0]] + common).stdout == "suspend requested\n")
        let suspended = try await CommandRunner.codexctl(["recovery", "status", ids[0]] + common)
        #expect(suspended.stdout.contains("state         suspended (suspended)"))

        #expect(try await CommandRunner.codexctl(["recovery", "cancel", ids[1]] + common).status == 0)
        let receipt = try await CommandRunner.codexctl(["recovery", "receipt", ids[1]] + common)
        #expect(receipt.status == 1)
        #expect(receipt.stderr.contains("cancelled"))

        #expect(try await CommandRunner.codexctl(["recovery", "abandon", ids[2]] + common).stdout == "abandoned\n")
        let afterAbandon = try JSONValue(parsing: try await CommandRunner.codexctl(["recovery", "list", "--json"] + common).stdout)
        #expect(afterAbandon["disposed"] == .array([.string(ids[2])]))

        let cleanup = try await CommandRunner.codexctl(["recovery", "cleanup", "--before", "2999-01-01T00:00:00Z", "--json"] + common)
        #expect(try JSONValue(parsing: cleanup.stdout)["removed"] == .array([.string(ids[2])]))

        let purge = try await CommandRunner.codexctl(["recovery", "purge", "--scope", "cli"] + common)
        #expect(purge.status == 0, "\(purge.stderr)")
        #expect(purge.stdout.hasSuffix("2 removed, 0 skipped\n"))
        let empty = try JSONValue(parsing: try await CommandRunner.codexctl(["recovery", "list", "--json"] + common).stdout)
        #expect(empty["operations"] == .array([]))
    }

    /// The commands act for one account: another account's operation is refused and left as it was
    /// (they once suspended, cancelled and abandoned any account's operations for any `--binding`).
    @Test func anotherAccountsOperationIsRefusedAndLeftAsItWas() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-recovery-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (binding, handles) = try await Self.prepared(1, in: directory)
        let id = handles[0].operationID.uuidString.lowercased()
        let before = DirectorySnapshot(directory.path)
        for command in ["suspend", "cancel", "abandon"] {
            let run = try await CommandRunner.codexctl(["recovery", command, id, "--store", directory.path, "--binding", "api-key:someone-else"])
            #expect(run.status == 1, "\(command): \(run.stderr)")
            #expect(run.stderr == "Error: account_mismatch: the operation belongs to another account: give its --binding to act for it\n", "\(command)")
        }
        #expect(DirectorySnapshot(directory.path).differences(from: before) == [])
        // Its own account's binding still works.
        let own = try await CommandRunner.codexctl(["recovery", "abandon", id, "--store", directory.path, "--binding", binding])
        #expect(own.stdout == "abandoned\n", "\(own.stderr)")
    }

    /// An operation of the acting account that saved a sign-in blocker (its 401 could not be renewed)
    /// is the account's own: abandoning it, that state's way out, is not refused as another account's.
    @Test func theAccountsOwnBlockedOperationCanBeAbandoned() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-recovery-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [.json(#"{"error":{"message":"bad key"}}"#, status: 401)])
        defer { server.shutdown() }
        let auth = APIKeyAuthProvider(apiKey: "sk-cli-test")
        let store = try AgentStructuredRecoveryStore(directory: directory)
        let recovery = AgentStructuredRecovery(
            configuration: .init(endpoint: try ResponsesEndpoint(baseURL: server.baseURL, profile: .publicAPI)), httpClient: DefaultHTTPClient(), authProvider: auth
        )
        let handle = try await recovery.prepare(
            Request(text: "job", executionMode: .ephemeral), format: Self.format, model: .init(model: "gpt-6-astra"), store: store, options: .init(scope: "cli")
        )
        await #expect(throws: (any Error).self) {
            _ = try await recovery.sendRecovering(handle, response: [String: Bool].self, format: Self.format, store: store) { _ in true }
        }
        let binding = try await auth.credentials().binding
        let id = handle.operationID.uuidString.lowercased()
        let common = ["--store", directory.path, "--binding", binding]
        let status = try await CommandRunner.codexctl(["recovery", "status", id, "--json"] + common)
        #expect(status.stdout.contains("authenticationRequired"), "\(status.stdout) \(status.stderr)")
        let abandoned = try await CommandRunner.codexctl(["recovery", "abandon", id] + common)
        #expect(abandoned.stdout == "abandoned\n", "\(abandoned.stderr)")
    }

    @Test func usageMistakesExit64() async throws {
        let missingStore = try await CommandRunner.codexctl(["recovery", "list", "--binding", "x"])
        #expect(missingStore.status == 64)
        #expect(missingStore.stderr.contains("--store <dir> is required"))
        let untouched = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-never-\(UUID().uuidString)")
        let badID = try await CommandRunner.codexctl(["recovery", "status", "not-a-uuid", "--store", untouched.path, "--binding", "x"])
        #expect(badID.status == 64)
        #expect(badID.stderr.contains("must be a UUID"))
        #expect(!FileManager.default.fileExists(atPath: untouched.path))
        let help = try await CommandRunner.codexctl(["help", "recovery"])
        #expect(help.stdout.contains("purge"))
        let empty = try await CommandRunner.codexctl(["recovery", "list", "--store", "", "--binding", "x"])
        #expect(empty.status == 64)
        #expect(empty.stderr.hasPrefix("Error: --store needs a directory path"), "\(empty.stderr)")
    }

    /// A command that changes a store never makes one of a directory that is not one: the directory
    /// keeps its mode and contents.
    @Test func aDirectoryThatIsNotAStoreIsRefusedAndLeftAsItWas() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-notastore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("hi".utf8).write(to: directory.appendingPathComponent("notes.txt"))
        #expect(chmod(directory.path, 0o755) == 0)
        let before = DirectorySnapshot(directory.path)
        let id = UUID().uuidString
        for command in [["ack", id], ["abandon", id], ["cancel", id], ["suspend", id], ["purge"], ["cleanup", "--before", "2026-01-01T00:00:00Z"]] {
            let run = try await CommandRunner.codexctl(["recovery"] + command + ["--store", directory.path, "--binding", "x"])
            #expect(run.status == 1, "\(command): \(run.stderr)")
            #expect(run.stderr == "Error: store_not_found: no recovery store at \(directory.path)\n", "\(command): \(run.stderr)")
        }
        #expect(DirectorySnapshot(directory.path).differences(from: before) == [])
        // A store restored without its lock files still has its accounts' partitions: it is a store.
        let restored = directory.appendingPathComponent("restored")
        try FileManager.default.createDirectory(at: restored.appendingPathComponent("a" + String(repeating: "0f", count: 16)), withIntermediateDirectories: true)
        let purged = try await CommandRunner.codexctl(["recovery", "purge", "--store", restored.path, "--binding", "x"])
        #expect(purged.status == 0, "\(purged.stderr)")
    }
}

/// `codexctl bench recovery` runs end to end on a small workload and prints the shared JSON shape.
@Suite struct RecoveryBenchCommandTests {
    @Test func aSmallRunPrintsEveryFigure() async throws {
        let result = try await CommandRunner.codexctl(["bench", "recovery", "--json", "--lifecycles", "3", "--operations", "20"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONValue(parsing: result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(report["suite"] == "recovery")
        guard case .array(let results)? = report["results"] else {
            Issue.record("no results")
            return
        }
        let modes = results.compactMap { result -> String? in
            if case .string(let mode)? = result["mode"] { return mode }
            return nil
        }
        #expect(modes.contains("fsyncs per lifecycle"))
        #expect(modes.contains("20 operations, warm"))
        let fsyncs = results.first { $0["mode"] == "fsyncs per lifecycle" }?["value"]
        // 4 record writes (file and directory fsync each) and the removal of the record (directory fsync).
        #expect(fsyncs == 9)
    }
}
