import CodexCore
import CodexRuntime
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Execution handles from `start(_:in:)`: readiness, cancellation and steering of one turn only.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct AgentTurnExecutionTests {
    private typealias H = BackendHarness

    @Test func aStartedTurnIsReadyThenRunsToCompletion() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("Hi.")])
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore()))
        let thread = try await runtime.createThread()
        let execution = try await runtime.start(Request(text: "Hello"), in: thread.id)
        #expect(execution.threadID == thread.id)
        #expect(runtime.activeTurnID(in: thread.id) == execution.id)
        try await execution.waitUntilReady()
        let (events, error) = await collect(execution.events)
        #expect(error == nil)
        #expect(events.map(name).last == "turnCompleted")
    }

    @Test func aReadinessFailureReachesTheWaiter() async throws {
        let failure = AgentRuntimeError(code: .unauthorized, message: "sign in")
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.complete()], readinessFailure: failure)])
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore()))
        let thread = try await runtime.createThread()
        let execution = try await runtime.start(Request(text: "Hello"), in: thread.id)
        let error = await #expect(throws: AgentRuntimeError.self) { try await execution.waitUntilReady() }
        #expect(error?.code == .unauthorized)
        _ = await collect(execution.events)
    }

    @Test func cancellingAReadinessWaiterCancelsOnlyThatWait() async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        script.messageDone("msg_1", "Ready now.", index: 0, phase: "final_answer")
        script.completed("resp_1")
        // The response head itself waits for the release: the turn is accepted but not ready.
        let server = try LoopbackHTTPServer(replies: [ScriptedReply(
            headers: [.init(name: "Content-Type", value: "text/event-stream")], parts: [.hold, .bytes(Array(script.text.utf8))], framing: .chunked
        )])
        defer { server.shutdown() }
        let runtime = try AgentRuntime(configuration: .init(backend: try H.backend(server), stateStore: InMemoryRuntimeStateStore()))
        let thread = try await runtime.createThread()
        let execution = try await runtime.start(Request(text: "Hello"), in: thread.id)
        let consumer = Task { await collect(execution.events) }
        #expect(await server.waitForRequests(count: 1, timeout: .hangGuard))
        let waiter = Task { try await execution.waitUntilReady() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        server.releaseHeld()
        try await execution.waitUntilReady()
        let (events, error) = await consumer.value
        #expect(error == nil)
        #expect(events.map(name).last == "turnCompleted")
    }

    @Test func anOldHandleNeitherCancelsNorSteersANewerTurn() async throws {
        let backend = FixtureAgentBackend(turns: [
            .reply("First."),
            FixtureAgentBackend.Turn([.event(.assistantMessageDelta("Second")), .consumeSteering, .complete()], acceptsSteering: true),
        ])
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore()))
        let thread = try await runtime.createThread()
        let old = try await runtime.start(Request(text: "One"), in: thread.id)
        _ = await collect(old.events)
        let newer = try await runtime.start(Request(text: "Two"), in: thread.id)
        var names: [String] = []
        for try await event in newer.events {
            names.append(name(event))
            if case .assistantMessageDelta = event {
                old.cancel()
                let stale = await #expect(throws: AgentRuntimeError.self) { try await old.steer("Not me.") }
                #expect(stale?.code == .turnNotActive)
                try await newer.steer("Me.")
            }
        }
        #expect(names.last == "turnCompleted")
        #expect(backend.acceptedSteers == ["Me."])
    }

    @Test func cancellingAnEphemeralExecutionEndsItsEvents() async throws {
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.event(.assistantMessageDelta("Working")), .hang])])
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore()))
        let thread = try await runtime.createThread()
        let execution = try await runtime.start(Request(text: "Aside", executionMode: .ephemeral), in: thread.id)
        await #expect(throws: CancellationError.self) {
            for try await event in execution.events {
                if case .assistantMessageDelta = event { execution.cancel() }
            }
        }
        await eventually("the fixture turn saw its cancellation") { backend.cancelledTurns == 1 }
    }
}
