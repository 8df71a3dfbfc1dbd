import CodexCore
import CodexKitTesting
import CodexRuntime
import CodexStoragePostgres
import CodexTestSupport
import Foundation
import Testing

/// The database server crashes (every backend killed, as `pg_ctl -m immediate` does) in the middle of a
/// turn and comes back: reads and writes fail with typed, transient errors meanwhile; the runtime's
/// ordered writes wait it out; afterwards the turn is committed once and nothing committed before the
/// crash is lost. On a private cluster, since the test stops its server.
@Suite(.serialized, .timeLimit(.minutes(5 * Sanitizer.slowdown))) struct PostgresServerRestartTests {
    @Test func aServerCrashMidTurnLosesNothingCommittedAndCommitsTheTurnOnce() async throws {
        let cluster = try await PostgresTestCluster.start()
        defer { cluster.remove() }
        let store = try await PostgresRuntimeStateStore(connectionString: cluster.connectionString)
        let clock = ManualClock()
        // The model streams, waits on the manual clock (the test crashes the server meanwhile), then ends.
        let backend = FixtureAgentBackend(turns: [
            .reply("Before the crash."),
            FixtureAgentBackend.Turn([.event(.assistantMessageDelta("Across ")), .sleep(.seconds(1)), .event(.assistantMessageDelta("the crash.")), .complete()]),
        ], clock: clock)
        let log = InMemoryAgentLogSink()
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: store, logSink: log))
        let thread = try await runtime.createThread(title: "crash")
        #expect(try await runtime.send(Request(text: "first"), in: thread.id) == "Before the crash.")

        let execution = try await runtime.start(Request(text: "second"), in: thread.id)
        var events = execution.events.makeAsyncIterator()
        while let event = try await events.next() {
            if case .assistantMessageDelta = event { break }
        }
        await clock.waitForSleepers(count: 1)
        try await cluster.stopServer(immediate: true)

        // While it is down: typed, transient errors.
        let down = await #expect(throws: PostgresStoreError.self) { _ = try await store.threads() }
        #expect(down?.code == .unavailable)
        #expect(down?.isTransient == true)

        // The turn ends; its commit meets the dead server and is retried until the server is back.
        clock.advance(by: .seconds(1))
        let deadline = ContinuousClock.now + .hangGuard
        while log.events(named: "runtime.storage.retry").isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!log.events(named: "runtime.storage.retry").isEmpty, "the commit waited for the server")
        try await cluster.startServer()
        var completed = false
        while let event = try await events.next() {
            if case .turnCompleted = event { completed = true }
        }
        #expect(completed)

        let lines = try await store.history(of: thread.id, query: AgentHistoryQuery()).items.compactMap { item -> String? in
            switch item {
            case .message(let message): "\(message.role.rawValue): \(message.text)"
            case .systemEvent(let event): "event \(event.type.rawValue)"
            default: nil
            }
        }
        #expect(lines == [
            "event turn_started", "user: first", "assistant: Before the crash.", "event turn_completed",
            "event turn_started", "user: second", "assistant: Across the crash.", "event turn_completed",
        ])
        #expect(try await store.latestTurn(of: thread.id)?.status == .completed)
        #expect(try await store.thread(thread.id)?.status == .idle)
    }
}
