import CodexCore
import CodexKitTesting
import CodexRuntime
import CodexStoragePostgres
import CodexTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

/// Many replicas on one PostgreSQL database: owner leases that die with their process, live turns left
/// alone by another replica's restart sweep, one winner when two replicas start a turn on one thread at
/// once, and writes whose connection broke landing exactly once.
@Suite(.serialized, .timeLimit(.minutes(5 * Sanitizer.slowdown))) struct PostgresReplicaTests {
    static let fixture = ChildProcess.product("RuntimeFixture")

    static func store(_ schema: String) async throws -> PostgresRuntimeStateStore {
        try await PostgresRuntimeStateStore(connectionString: try await PostgresTestCluster.shared().connectionString, schema: schema)
    }

    /// Runs a replica process whose turn on `thread` hangs until it is killed.
    static func replica(_ url: String, _ schema: String, _ thread: AgentThreadID, _ pids: ReplicaProcessIDs) async throws -> ChildProcess.Outcome {
        try await ChildProcess.run(fixture, ["--postgres", url, "--schema", schema, "--thread", thread.rawValue, "--text", "turn of \(thread.rawValue)"]) { pid in
            pids[thread] = pid
        }
    }

    /// Waits until `condition` holds (each look is a query; the suite's time limit is the only bound).
    static func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .hangGuard
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test func aLeaseIsHeldWhileItsValueLivesAndEndsWhenItsProcessDies() async throws {
        let schema = PostgresTestCluster.uniqueSchema("lease")
        let store = try await Self.store(schema)
        let other = try await Self.store(schema)
        var lease = try store.acquireOwnerLease()
        let owner = try #require(lease?.ownerID)
        #expect(try other.isOwnerLeaseHeld(owner))
        #expect(try !other.isOwnerLeaseHeld("never-seen"))
        lease = nil
        #expect(try await Self.eventually { try !other.isOwnerLeaseHeld(owner) }, "released with its value")

        // A replica process killed with SIGKILL: its lease ends with its session.
        let thread = AgentThreadID()
        let pid = Mutex<Int32>(0)
        async let host = ChildProcess.run(Self.fixture, [
            "--postgres", try await PostgresTestCluster.shared().connectionString, "--schema", schema, "--thread", thread.rawValue, "--text", "hello",
        ]) { started in pid.withLock { $0 = started } }
        #expect(try await Self.eventually { try await other.latestTurn(of: thread)?.status == .running })
        let hostOwner = try #require(try await other.latestTurn(of: thread)?.ownerID)
        #expect(try other.isOwnerLeaseHeld(hostOwner))
        kill(pid.withLock { $0 }, SIGKILL)
        #expect(try await host.killed)
        #expect(try await Self.eventually { try !other.isOwnerLeaseHeld(hostOwner) }, "the server ended the killed replica's session and its lock")
    }

    @Test func twoReplicasKeepEachOthersLiveTurnsAndOnlyTheKilledOnesTurnIsRecovered() async throws {
        let schema = PostgresTestCluster.uniqueSchema("replicas")
        let url = try await PostgresTestCluster.shared().connectionString
        let store = try await Self.store(schema)
        let killed = AgentThreadID()
        let alive = AgentThreadID()
        let pids = ReplicaProcessIDs()
        async let killedOutcome = Self.replica(url, schema, killed, pids)
        async let aliveOutcome = Self.replica(url, schema, alive, pids)
        #expect(try await Self.eventually { try await store.latestTurn(of: killed)?.status == .running })
        #expect(try await Self.eventually { try await store.latestTurn(of: alive)?.status == .running })
        let killedOwner = try #require(try await store.latestTurn(of: killed)?.ownerID)
        kill(try #require(pids[killed]), SIGKILL)
        #expect(try await killedOutcome.killed)
        #expect(try await Self.eventually { try !store.isOwnerLeaseHeld(killedOwner) })

        // A third replica restarts while the other replica's turn is still running.
        let runtime = try AgentRuntime(configuration: .init(backend: FixtureAgentBackend(turns: [.reply("recovered")]), stateStore: store))
        #expect(try await runtime.recoverAbandonedTurns() == 1, "only the killed replica's turn is abandoned")
        #expect(try await store.latestTurn(of: killed)?.status == .interrupted)
        #expect(try await store.latestTurn(of: alive)?.status == .running, "the live replica's turn is untouched")
        let busy = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.send(Request(text: "cut in"), in: alive) }
        #expect(busy?.code == .threadBusy)
        #expect(try await runtime.send(Request(text: "after the kill"), in: killed) == "recovered")

        let aliveOwner = try #require(try await store.latestTurn(of: alive)?.ownerID)
        kill(try #require(pids[alive]), SIGKILL)
        #expect(try await aliveOutcome.killed)
        #expect(try await Self.eventually { try !store.isOwnerLeaseHeld(aliveOwner) })
        #expect(try await runtime.recoverAbandonedTurns() == 1)
        #expect(try await store.latestTurn(of: alive)?.status == .interrupted)
        #expect(try await store.thread(alive)?.status == .idle)
    }

    @Test func twoReplicasStartingATurnOnOneThreadAtOnceEndWithExactlyOneStarted() async throws {
        let schema = PostgresTestCluster.uniqueSchema("start")
        let first = try await Self.store(schema)
        let second = try await Self.store(schema)
        let hanging = FixtureAgentBackend.Turn([.event(.assistantMessageDelta("working")), .hang])
        for round in 0..<20 {
            let thread = AgentThread(title: "round \(round)")
            try await first.upsertThread(thread)
            // Two runtimes on two stores: two replicas, each with its own pool and lease.
            let replicas = try [first, second].map { store in
                try AgentRuntime(configuration: .init(backend: FixtureAgentBackend(turns: [hanging]), stateStore: store, turnLimits: .unlimited))
            }
            @Sendable func attempt(_ runtime: AgentRuntime, _ text: String) async -> Result<AgentTurnExecution, any Error> {
                do { return .success(try await runtime.start(Request(text: text), in: thread.id)) } catch { return .failure(error) }
            }
            async let a = attempt(replicas[0], "a")
            async let b = attempt(replicas[1], "b")
            let outcomes = await [a, b]
            let started = outcomes.compactMap { try? $0.get() }
            let refused = outcomes.compactMap { outcome -> AgentRuntimeError.Code? in
                if case .failure(let error) = outcome { return (error as? AgentRuntimeError)?.code }
                return nil
            }
            #expect(started.count == 1, "round \(round): \(refused)")
            #expect(refused == [AgentRuntimeError.Code.threadBusy], "round \(round)")
            for execution in started { execution.cancel() }
            for execution in started {
                do { for try await _ in execution.events {} } catch is CancellationError {}
            }
        }
    }

    @Test func aCommitWhoseReplyIsLostLandsOnceAndABrokenConnectionIsReplaced() async throws {
        let schema = PostgresTestCluster.uniqueSchema("lost")
        let store = try await PostgresRuntimeStateStore(connectionString: try await PostgresTestCluster.shared().connectionString, schema: schema, applicationName: schema)
        let thread = AgentThread(title: "once")
        try await store.upsertThread(thread)
        // The commit happens but its reply is lost: the store finds its write key and does not write again.
        store.loseCommitReplies(1)
        try await store.appendHistory(RuntimeStateStoreConformance.sampleHistory(thread: thread.id, turn: AgentTurnID()), to: thread.id)
        #expect(try await store.history(of: thread.id, query: AgentHistoryQuery()).items.count == 6)

        // Every session of the store ended by the server: the next write finds its connection broken
        // before anything was written, and runs once on a new one.
        let cluster = try await PostgresTestCluster.shared()
        try await cluster.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\(schema)' AND pid <> pg_backend_pid()")
        try await store.appendHistory(RuntimeStateStoreConformance.sampleHistory(thread: thread.id, turn: AgentTurnID(), index: 1), to: thread.id)
        #expect(try await store.history(of: thread.id, query: AgentHistoryQuery()).items.count == 12)
        let answered = try await store.replayableHistory(of: thread.id)
        #expect(answered.count == 12)
    }
}

/// The process IDs of running replica fixtures, by thread.
final class ReplicaProcessIDs: Sendable {
    private let pids = Mutex<[AgentThreadID: Int32]>([:])
    subscript(thread: AgentThreadID) -> Int32? {
        get { pids.withLock { $0[thread] } }
        set { pids.withLock { $0[thread] = newValue } }
    }
}
