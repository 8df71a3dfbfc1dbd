@testable import CodexRecovery
import CodexTestSupport
import Foundation

/// Launches the `RecoveryIntegrationFixture` executable (built next to the test bundle) as a real child process.
enum FixtureProcess {
    typealias Outcome = ChildProcess.Outcome

    static let executable = ChildProcess.product("RecoveryIntegrationFixture")

    static func run(
        executable: URL = FixtureProcess.executable, _ arguments: [String], started: @Sendable (Int32) async -> Void = { _ in }
    ) async throws -> Outcome {
        try await ChildProcess.run(executable, arguments, started: started)
    }
}

/// One host's world for the process tests: a store directory, a host store file, and a loopback
/// Responses server that completes every generation.
final class FixtureWorld: Sendable {
    let scratch: ScratchDirectory
    let server: LoopbackHTTPServer

    init(reply: ScriptedReply = Streams.complete()) throws {
        scratch = try ScratchDirectory()
        let script = ReplyScript([reply], fallback: Streams.complete())
        server = try LoopbackHTTPServer { _ in script.next() }
    }

    deinit { server.shutdown() }

    var hostURL: URL { scratch.url.appendingPathComponent("host.json") }

    func run(_ extra: [String] = [], started: @Sendable (Int32) async -> Void = { _ in }) async throws -> FixtureProcess.Outcome {
        try await FixtureProcess.run(
            ["--store", scratch.storeURL.path, "--host", hostURL.path, "--base-url", server.baseURL.absoluteString] + extra, started: started
        )
    }

    /// Where the victim stopped, in the words of the recovery crash table (read from the host store and
    /// the recovery store before any fresh process runs).
    func crashTableRow() throws -> String {
        let host = (try? self.host()) ?? [:]
        let store = try AgentStructuredRecoveryStore(directory: scratch.storeURL)
        var records: [RecoveryOperationRecord] = []
        var dispositions = 0
        for partition in try store.allPartitions() {
            for id in try partition.operationIDs(withSuffix: RecoveryOperationRecord.fileSuffix) {
                if let record = try partition.load(RecoveryOperationRecord.self, id) { records.append(record) }
            }
            dispositions += try partition.operationIDs(withSuffix: RecoveryDispositionRecord.fileSuffix).count
        }
        guard host["handle"] != nil else { return records.isEmpty ? "before SDK request persistence" : "SDK record saved, before host stores handle" }
        if (host["commitCount"] as? Int ?? 0) > 0 {
            if dispositions > 0 { return records.isEmpty ? "acknowledged, before the host noted it" : "acknowledgement marker saved, before payload removal" }
            return "host commit succeeded, before acknowledgement"
        }
        guard let record = records.first else { return "unknown" }
        if record.completedPayload != nil { return "validated completion saved, before host commit" }
        if record.attemptsUsed > 0 { return "authorized attempt count saved, before/while sending" }
        // The attempt's ID is saved with the record; whether the host was asked tells the two rows apart.
        if !authorizedAttemptIDs().isEmpty { return "pending attempt ID saved, before/during host authorization" }
        return "host handle saved, before attempt authorization"
    }

    /// The host's saved state.
    func host() throws -> [String: Any] {
        (try JSONSerialization.jsonObject(with: Data(contentsOf: hostURL)) as? [String: Any]) ?? [:]
    }

    /// The generation POSTs the server received.
    var posts: [RecordedRequest] { server.requests.filter { $0.method == "POST" && $0.path.hasSuffix("/responses") } }

    /// Attempt IDs the host authorized (from the fixture's log).
    func authorizedAttemptIDs() -> [String] {
        let log = (try? String(contentsOf: scratch.url.appendingPathComponent("authorizations.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").map { String($0.split(separator: " ")[1]) }
    }
}
