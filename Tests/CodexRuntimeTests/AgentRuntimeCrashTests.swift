import CodexCore
import CodexRuntime
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Glibc
import Testing

/// A host killed with SIGKILL mid-turn: after a restart on the same database the thread is usable, the
/// accepted input is kept, and the cut-short turn is recorded as interrupted.
@Suite(.serialized, .timeLimit(.minutes(2))) struct AgentRuntimeCrashTests {
    static let fixture = ChildProcess.product("RuntimeFixture")

    @Test func aHostKilledMidTurnRestartsWithTheInputKeptAndTheTurnInterrupted() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-runtime-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state.sqlite").path
        let thread = AgentThreadID()

        let outcome = try await ChildProcess.run(Self.fixture, ["--db", path, "--thread", thread.rawValue, "--text", "before the crash"]) { pid in
            // Kill it once the turn is accepted and streaming (the store shows it running).
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                if let store = try? SQLiteRuntimeStateStore(path: path), (try? await store.latestTurn(of: thread))??.status == .running { break }
                try? await Task.sleep(for: .milliseconds(20))
            }
            kill(pid, SIGKILL)
        }
        #expect(outcome.killed, "\(outcome.stderr)")

        let store = try SQLiteRuntimeStateStore(path: path)
        #expect(try await store.latestTurn(of: thread)?.status == .running, "the crash left the turn running")
        let backend = FixtureAgentBackend(turns: [.reply("after the crash")])
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: store))
        #expect(try await runtime.start() == 1, "start() closes the abandoned turn")
        #expect(try await runtime.resumeThread(thread).status == .idle)
        #expect(try await store.latestTurn(of: thread)?.status == .interrupted)
        #expect(try await runtime.start() == 0, "start() is idempotent")
        #expect(try await runtime.send(Request(text: "hello again"), in: thread) == "after the crash")
        #expect(describe(try await history(store, thread)) == [
            "event turn_started", "user: before the crash", "event turn_interrupted",
            "event turn_started", "user: hello again", "assistant: after the crash", "event turn_completed",
        ])
        let replayed = backend.requests.first?.history.compactMap { item -> String? in
            if case .message(let message) = item { return "\(message.role.rawValue): \(message.text)" }
            return nil
        }
        #expect(replayed == ["user: before the crash"])
        #expect(try await store.thread(thread)?.status == .idle)
        #expect(try await store.integrityCheck() == ["ok"])
    }
}
