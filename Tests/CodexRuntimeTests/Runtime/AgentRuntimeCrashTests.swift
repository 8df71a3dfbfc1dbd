import CodexCore
import CodexRuntime
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

/// A host killed with SIGKILL mid-turn: after a restart on the same database the thread is usable, the
/// accepted input is kept, and the cut-short turn is recorded as interrupted.
@Suite(.serialized, .timeLimit(.minutes(3 * Sanitizer.slowdown))) struct AgentRuntimeCrashTests {
    static let fixture = ChildProcess.product("RuntimeFixture")

    @Test func aHostKilledMidTurnRestartsWithTheInputKeptAndTheTurnInterrupted() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-runtime-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state.sqlite").path
        let thread = AgentThreadID()

        let outcome = try await ChildProcess.run(Self.fixture, ["--db", path, "--thread", thread.rawValue, "--text", "before the crash"]) { pid in
            // Kill it once the turn is accepted and streaming (the store shows it running).
            let deadline = ContinuousClock.now + .hangGuard
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
        #expect(try await runtime.recoverAbandonedTurns() == 1, "recoverAbandonedTurns() closes the abandoned turn")
        #expect(try await runtime.resumeThread(thread).status == .idle)
        #expect(try await store.latestTurn(of: thread)?.status == .interrupted)
        #expect(try await runtime.recoverAbandonedTurns() == 0, "recoverAbandonedTurns() is idempotent")
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

    /// Runs a host fixture whose turn on `thread` hangs until it is killed.
    private static func host(_ path: String, _ thread: AgentThreadID, _ pids: ProcessIDs) async throws -> ChildProcess.Outcome {
        try await ChildProcess.run(fixture, ["--db", path, "--thread", thread.rawValue, "--text", "turn of \(thread.rawValue)"]) { pid in
            pids[thread] = pid
        }
    }

    /// Waits until the store shows `thread`'s latest turn running (read-only: looking writes nothing).
    private static func waitUntilRunning(_ path: String, _ thread: AgentThreadID) async -> Bool {
        let deadline = ContinuousClock.now + .hangGuard
        while ContinuousClock.now < deadline {
            if let store = try? SQLiteRuntimeStateStore(readingAt: path), (try? await store.latestTurn(of: thread))??.status == .running { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test func twoHostsOnOneDatabaseKeepEachOthersLiveTurnsAndOnlyTheKilledOneIsRecovered() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-runtime-owners-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state.sqlite").path
        let killed = AgentThreadID()
        let alive = AgentThreadID()
        _ = try SQLiteRuntimeStateStore(path: path)
        let pids = ProcessIDs()
        async let killedOutcome = Self.host(path, killed, pids)
        async let aliveOutcome = Self.host(path, alive, pids)
        #expect(await Self.waitUntilRunning(path, killed))
        #expect(await Self.waitUntilRunning(path, alive))
        kill(try #require(pids[killed]), SIGKILL)
        #expect(try await killedOutcome.killed)

        // A third host restarts on the same database while the other host's turn is still running.
        let store = try SQLiteRuntimeStateStore(path: path)
        let runtime = try AgentRuntime(configuration: .init(backend: FixtureAgentBackend(turns: [.reply("recovered")]), stateStore: store))
        #expect(try await runtime.recoverAbandonedTurns() == 1, "only the killed host's turn is abandoned")
        #expect(try await store.latestTurn(of: killed)?.status == .interrupted)
        #expect(try await store.latestTurn(of: alive)?.status == .running, "the live host's turn is untouched")
        #expect(try await store.thread(alive)?.status == .running)
        let busy = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.send(Request(text: "cut in"), in: alive) }
        #expect(busy?.code == .threadBusy)
        #expect(try await store.latestTurn(of: alive)?.status == .running)
        #expect(try await runtime.send(Request(text: "after the kill"), in: killed) == "recovered")

        // Once the other host dies too, its turn is abandoned and recovered.
        kill(try #require(pids[alive]), SIGKILL)
        #expect(try await aliveOutcome.killed)
        #expect(try await runtime.recoverAbandonedTurns() == 1)
        #expect(try await store.latestTurn(of: alive)?.status == .interrupted)
        #expect(try await store.thread(alive)?.status == .idle)
        #expect(try await store.check().isHealthy)
    }
}

/// The process IDs of running host fixtures, by thread.
final class ProcessIDs: Sendable {
    private let pids = Mutex<[AgentThreadID: Int32]>([:])
    subscript(thread: AgentThreadID) -> Int32? {
        get { pids.withLock { $0[thread] } }
        set { pids.withLock { $0[thread] = newValue } }
    }
}
