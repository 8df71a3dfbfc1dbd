@testable import CodexRuntime
import CodexCore
import CodexSchema
import CodexTestSupport
import Foundation
import Observation
import Synchronization
import Testing

/// The observable store for one selected thread: loading, a turn's live state, "Add to turn" and
/// "Stop", and change notifications through `Observation`.
@MainActor @Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct AgentRuntimeStoreTests {
    private func store(_ turns: [FixtureAgentBackend.Turn], tools: [AgentTool] = []) throws -> (AgentRuntimeStore, InMemoryRuntimeStateStore) {
        let state = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(backend: FixtureAgentBackend(turns: turns), stateStore: state, tools: tools))
        return (AgentRuntimeStore(runtime: runtime), state)
    }

    private static let limits = [AgentRateLimitSnapshot(limitID: "codex", primary: AgentRateLimitWindow(usedPercent: 25, windowDurationMinutes: 300))]

    @Test func aTurnSentThroughTheStoreUpdatesItsStateAndTheStoredMessages() async throws {
        let (store, _) = try store([FixtureAgentBackend.Turn([
            .event(.rateLimitsUpdated(Self.limits)),
            .event(.progress(.messageStarted(itemID: "msg_1", phase: .finalAnswer))),
            .event(.assistantMessageDelta("Hello ")), .event(.assistantMessageDelta("there.")),
            .event(.assistantMessageCompleted(AgentMessage(threadID: AgentThreadID(rawValue: ""), role: .assistant, text: "Hello there.", phase: .finalAnswer))),
            .event(.progress(.messageCompleted(itemID: "msg_1", phase: .finalAnswer))),
            .complete(),
        ])])
        let thread = try await store.createThread(title: "Chat")
        #expect(store.selectedThreadID == thread.id)
        #expect(store.selectedThread?.title == "Chat")
        #expect(store.messages.isEmpty)
        let summary = try await store.send("Hi")
        #expect(summary.finalMessage?.text == "Hello there.")
        #expect(store.latestProgress == .messageCompleted(itemID: "msg_1", phase: .finalAnswer))
        #expect(store.rateLimits == Self.limits)
        #expect(store.activeTurnID == nil)
        #expect(store.streamingText == "")
        #expect(store.lastError == nil)
        await eventually("the committed messages reached the store") { await store.messages.map(\.text) == ["Hi", "Hello there."] }
        await eventually("the thread list shows the thread") { await store.threads.map(\.id) == [thread.id] }
        #expect(store.selectedThread?.status == .idle)
    }

    /// A `codex.rate_limits` event names one family: it updates that family and keeps the others (a
    /// screen never loses the main `codex` window when another family reports).
    @Test func anUpdateForOneLimitFamilyKeepsTheOthers() async throws {
        let main = AgentRateLimitSnapshot(limitID: "codex", primary: AgentRateLimitWindow(usedPercent: 25, windowDurationMinutes: 300))
        let other = AgentRateLimitSnapshot(limitID: "codex_other", primary: AgentRateLimitWindow(usedPercent: 60))
        let newer = AgentRateLimitSnapshot(limitID: "codex", primary: AgentRateLimitWindow(usedPercent: 40, windowDurationMinutes: 300))
        let (store, _) = try store([
            FixtureAgentBackend.Turn([.event(.rateLimitsUpdated([main])), .event(.rateLimitsUpdated([other])), .complete()]),
            FixtureAgentBackend.Turn([.event(.rateLimitsUpdated([newer])), .complete()]),
        ])
        try await store.createThread()
        _ = try await store.send("One")
        #expect(store.rateLimits == [main, other])
        _ = try await store.send("Two")
        #expect(store.rateLimits == [newer, other])
        #expect(AgentRateLimitSnapshot.merging([other, main], with: []) == [main, other], "sorted by family ID")
    }

    @Test func streamingTextAndTheActiveTurnAreLiveWhileTheTurnRuns() async throws {
        let clock = ManualClock()
        let state = InMemoryRuntimeStateStore()
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.event(.assistantMessageDelta("Thinking")), .sleep(.seconds(1)), .complete()])], clock: clock)
        let store = AgentRuntimeStore(runtime: try AgentRuntime(configuration: .init(backend: backend, stateStore: state)))
        try await store.createThread()
        let send = Task { try await store.send("Go") }
        try await withTaskCancellationHandler {
            await clock.waitForSleepers(count: 1)
            await eventually("the delta reached the store") { await store.streamingText == "Thinking" }
            #expect(store.activeTurnID != nil)
            #expect(store.activeTurnID == store.runtime.activeTurnID(in: try #require(store.selectedThreadID)))
            clock.advance(by: .seconds(1))
            _ = try await send.value
        } onCancel: { send.cancel() }
        #expect(store.activeTurnID == nil)
        #expect(store.streamingText == "")
    }

    @Test func addToTurnAndStopActOnTheSelectedThreadsRunningTurn() async throws {
        let (store, state) = try store([
            FixtureAgentBackend.Turn([.consumeSteering, .event(.assistantMessageDelta("Short.")), .complete()], acceptsSteering: true),
            FixtureAgentBackend.Turn([.hang]),
        ])
        let thread = try await store.createThread()
        let first = Task { try await store.send("Explain") }
        try await withTaskCancellationHandler {
            await eventually("the turn runs") { await store.activeTurnID != nil }
            try await store.steer("Keep it short.")
            _ = try await first.value
        } onCancel: { first.cancel() }
        await eventually("the steer is a stored message") { await store.messages.map(\.text) == ["Explain", "Keep it short.", "Short."] }

        let second = Task { try await store.send("Wait") }
        let outcome = await withTaskCancellationHandler {
            await eventually("the second turn runs") { await store.activeTurnID != nil }
            try? await store.interrupt()
            return await second.result
        } onCancel: { second.cancel() }
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(store.activeTurnID == nil)
        #expect(try await state.latestTurn(of: thread.id)?.status == .interrupted)
        await eventually("the thread is idle again") { await store.selectedThread?.status == .idle }
        let noTurn = await #expect(throws: AgentRuntimeError.self) { try await store.interrupt() }
        #expect(noTurn?.code == .turnNotActive)
    }

    @Test func aTurnAnotherCallerRunsIsShownAndClearedWhenTheThreadIsIdle() async throws {
        let (store, _) = try store([FixtureAgentBackend.Turn([.hang])])
        let thread = try await store.createThread()
        let stream = try await store.runtime.stream(Request(text: "elsewhere"), in: thread.id)
        let consumer = Task { await collect(stream) }
        let result = await withTaskCancellationHandler {
            await eventually("the store shows the running turn") { await store.activeTurnID != nil }
            #expect(store.activeTurnID == store.runtime.activeTurnID(in: thread.id))
            try? await store.interrupt()
            return await consumer.value
        } onCancel: { consumer.cancel() }
        #expect(result.error is CancellationError)
        await eventually("the store clears it once the thread is idle") { await store.activeTurnID == nil }
    }

    @Test func theNewerOfTwoSelectionsWins() async throws {
        let (store, _) = try store([.reply("x")])
        let first = try await store.runtime.createThread(title: "first")
        let second = try await store.runtime.createThread(title: "second")
        async let a: Void = store.select(first.id)
        async let b: Void = store.select(second.id)
        _ = try await (a, b)
        let winner = try #require(store.selectedThreadID)
        #expect(store.selectedThread?.id == winner)
        _ = try await store.runtime.send(Request(text: "hello"), in: winner)
        await eventually("the winner's messages stay observed") { await store.messages.map(\.text) == ["hello", "x"] }
    }

    @Test func toolActivityAndItsPeakConcurrencyAreCounted() async throws {
        // Both calls wait for each other, so both are running at once before either finishes.
        let meeting = Meeting(parties: 2)
        let lookup = AgentTool(definition: ToolDefinition(name: "lookup", description: "Looks up.", inputSchema: ["type": "object"], supportsParallelExecution: true)) {
            await meeting.arrive()
            return .success($0, text: "ok")
        }
        let (store, _) = try store([
            FixtureAgentBackend.Turn([.event(.toolCallsRequested([call("c1"), call("c2")])), .awaitToolResults, .event(.assistantMessageDelta("Done.")), .complete()]),
        ], tools: [lookup])
        try await store.createThread()
        try await store.send("Look both up")
        #expect(store.peakToolConcurrency == 2)
        #expect(store.runningToolCalls == 0)
    }

    @Test func readersAreNotifiedThroughObservationWhenMessagesChange() async throws {
        let (store, _) = try store([.reply("Noted.", deltaLength: 100)])
        try await store.createThread()
        let changed = Mutex(false)
        withObservationTracking {
            _ = store.messages
        } onChange: {
            changed.withLock { $0 = true }
        }
        try await store.send("Remember this")
        await eventually("the observer was told") { changed.withLock { $0 } }
    }

    @Test func withoutASelectionTheControlsFailAndADeletedThreadIsDeselected() async throws {
        let (store, _) = try store([.reply("x")])
        let send = await #expect(throws: AgentRuntimeError.self) { try await store.send("Hi") }
        #expect(send?.code == .invalidRequest)
        let steer = await #expect(throws: AgentRuntimeError.self) { try await store.steer("Hi") }
        #expect(steer?.code == .invalidRequest)
        let missing = await #expect(throws: AgentRuntimeError.self) { try await store.select(AgentThreadID()) }
        #expect(missing?.code == .threadNotFound)
        #expect(store.selectedThreadID == nil, "a failed selection selects nothing")
        let afterFailure = await #expect(throws: AgentRuntimeError.self) { try await store.send("Hi") }
        #expect(afterFailure?.code == .invalidRequest)
        let thread = try await store.createThread()
        try await store.runtime.deleteThread(thread.id)
        await eventually("the deleted thread is no longer selected") { await store.selectedThreadID == nil }
        #expect(store.messages.isEmpty)
        try await store.select(nil)
        #expect(store.selectedThread == nil)
    }
}

/// Holds each arriving task until `parties` have arrived.
private final class Meeting: Sendable {
    private let state: Mutex<(arrived: Int, waiting: [CheckedContinuation<Void, Never>])>
    private let parties: Int

    init(parties: Int) {
        self.parties = parties
        state = Mutex((0, []))
    }

    func arrive() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let release = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.arrived += 1
                state.waiting.append(continuation)
                guard state.arrived >= parties else { return [] }
                defer { state.waiting = [] }
                return state.waiting
            }
            for waiter in release { waiter.resume() }
        }
    }
}
