import CodexCore
import CodexKitTesting
@testable import CodexRuntime
import Foundation
import Synchronization
import Testing

@Suite struct AgentRuntimeTurnTests {
    @Test func aPlainStreamEmitsItsEventsInOrderAndCommitsTheTurn() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("Hello there.", deltaLength: 6, usage: AgentUsage(inputTokens: 3, outputTokens: 2))])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread(title: "t")
        let (events, error) = await collect(try await runtime.stream(Request(text: "Hi"), in: thread.id))
        #expect(error == nil)
        #expect(events.map(name) == ["turnStarted", "delta(Hello )", "delta(there.)", "committed(assistant: Hello there.)", "turnCompleted"])
        guard case .turnCompleted(let summary) = events.last else { Issue.record("no completion"); return }
        #expect(summary.threadID == thread.id)
        #expect(summary.finalMessage?.text == "Hello there.")
        #expect(summary.usage == AgentUsage(inputTokens: 3, outputTokens: 2))
        #expect(describe(try await history(store, thread.id)) == ["event turn_started", "user: Hi", "assistant: Hello there.", "event turn_completed"])
        let turn = try #require(try await store.latestTurn(of: thread.id))
        #expect(turn.status == .completed)
        #expect(turn.id == summary.turnID)
        #expect(turn.usage == AgentUsage(inputTokens: 3, outputTokens: 2))
        #expect(try await store.thread(thread.id)?.status == .idle)
        #expect(runtime.activeTurnID(in: thread.id) == nil)
    }

    @Test func sendAndSendWithSummaryReturnTheFinalTextAndUsage() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("One."), .reply("Two.", usage: AgentUsage(inputTokens: 10, outputTokens: 4, totalTokens: 14))])
        let runtime = try makeRuntime(backend)
        let thread = try await runtime.createThread()
        #expect(try await runtime.send(Request(text: "first"), in: thread.id) == "One.")
        let result = try await runtime.sendWithSummary(Request(text: "second"), in: thread.id)
        #expect(result.value == "Two.")
        #expect(result.usage?.totalTokens == 14)
        #expect(result.summary.finalMessage?.role == .assistant)
        // The second turn replayed the first one's user and assistant messages.
        let replayed = backend.requests[1].history.compactMap { item -> String? in
            if case .message(let message) = item { return "\(message.role.rawValue): \(message.text)" }
            return nil
        }
        #expect(replayed == ["user: first", "assistant: One."])
    }

    @Test func aThreadRunsOnePersistentTurnWhileEphemeralRequestsStayIndependent() async throws {
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.hang]), .reply("quick")])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        let first = try await runtime.stream(Request(text: "long"), in: thread.id)
        let turnID = try #require(runtime.activeTurnID(in: thread.id))
        let busy = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.stream(Request(text: "again"), in: thread.id) }
        #expect(busy?.code == .threadBusy)
        #expect(try await runtime.send(Request(text: "aside", executionMode: .ephemeral), in: thread.id) == "quick")
        #expect(backend.requests[1].history.isEmpty)

        let stale = await #expect(throws: AgentRuntimeError.self) { try await runtime.interrupt(in: thread.id, expectedTurnID: AgentTurnID()) }
        #expect(stale?.code == .turnNotActive)
        try await runtime.interrupt(in: thread.id, expectedTurnID: turnID)
        let (events, error) = await collect(first)
        #expect(error is CancellationError)
        #expect(events.map(name) == ["turnStarted", "turnInterrupted(interrupted_by_host)"])
        #expect(try await store.latestTurn(of: thread.id)?.status == .interrupted)
        #expect(try await store.thread(thread.id)?.status == .idle)
        #expect(describe(try await history(store, thread.id)) == ["event turn_started", "user: long", "event turn_interrupted"])
        #expect(runtime.activeTurnID(in: thread.id) == nil)
        // The thread accepts a new turn at once.
        #expect(try await runtime.send(Request(text: "next"), in: thread.id) == "quick")
    }

    @Test func aCallerCancelledBeforePreparationReservesPersistsAndLaunchesNothing() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("never")])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        let result = await Task { () -> (any Error)? in
            withUnsafeCurrentTask { $0?.cancel() }
            do {
                _ = try await runtime.send(Request(text: "x"), in: thread.id)
                return nil
            } catch {
                return error
            }
        }.value
        #expect(result is CancellationError)
        await runtime.flushPendingWrites()
        #expect(backend.requests.isEmpty)
        #expect(try await history(store, thread.id).isEmpty)
        #expect(try await store.latestTurn(of: thread.id) == nil)
        #expect(try await store.thread(thread.id)?.status == .idle)
        #expect(runtime.activeTurnID(in: thread.id) == nil)
    }

    @Test func aCallerCancelledWhileStorageIsBlockedLeavesAtOnceAndTheWritesFlushInOrderLater() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("never")])
        let store = GatedStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        store.close()
        let task = Task { () -> (any Error)? in
            do {
                _ = try await runtime.send(Request(text: "accepted input"), in: thread.id)
                return nil
            } catch {
                return error
            }
        }
        await eventually("the input write reached the blocked store") { store.blockedWrites == 1 }
        task.cancel()
        let error = await task.value
        #expect(error is CancellationError)
        #expect(!store.isOpen, "the caller left while the store was still blocked")
        #expect(runtime.activeTurnID(in: thread.id) == nil)
        store.open()
        await runtime.flushPendingWrites()
        #expect(describe(try await history(store, thread.id)) == ["event turn_started", "user: accepted input", "event turn_interrupted"])
        #expect(try await store.latestTurn(of: thread.id)?.status == .interrupted)
        #expect(try await store.thread(thread.id)?.status == .idle)
        #expect(backend.requests.isEmpty)
    }

    @Test func cancellingTheConsumerCancelsTheProducerAndRecordsTheInterruption() async throws {
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.event(.assistantMessageDelta("a")), .hang])])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "x"), in: thread.id)
        let consumer = await consumerAfterFirstDelta(stream)
        consumer.cancel()
        await eventually("the thread is free again") { runtime.activeTurnID(in: thread.id) == nil }
        await runtime.flushPendingWrites()
        #expect(try await store.latestTurn(of: thread.id)?.status == .interrupted)
        #expect(try await store.thread(thread.id)?.status == .idle)
    }

    @Test func releasingTheStreamAndItsIteratorCancelsTheProducer() async throws {
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.hang])])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        do {
            let stream = try await runtime.stream(Request(text: "x"), in: thread.id)
            var iterator = stream.makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first.map(name) == "turnStarted")
        }
        await eventually("the thread is free again") { runtime.activeTurnID(in: thread.id) == nil }
        await runtime.flushPendingWrites()
        #expect(try await store.latestTurn(of: thread.id)?.status == .interrupted)
    }

    @Test func endOfStreamWithoutTurnCompletedIsTurnSummaryMissingAndFailsThePersistentTurn() async throws {
        let message = AgentMessage(threadID: AgentThreadID(rawValue: ""), role: .assistant, text: "almost")
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.event(.assistantMessageDelta("almost")), .event(.assistantMessageCompleted(message))])])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "x"), in: thread.id))
        #expect((error as? AgentRuntimeError)?.code == .turnSummaryMissing)
        #expect(events.map(name) == ["turnStarted", "delta(almost)", "turnFailed(turn_summary_missing)"])
        let sendError = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.send(Request(text: "y"), in: thread.id) }
        #expect(sendError?.code == .turnSummaryMissing)
        let turn = try #require(try await store.latestTurn(of: thread.id))
        #expect(turn.status == .failed)
        #expect(turn.failure?.code == .turnSummaryMissing)
        #expect(describe(try await history(store, thread.id)).filter { $0.hasPrefix("assistant") }.isEmpty)
        #expect(try await store.thread(thread.id)?.status == .idle)
    }

    @Test func aFailedReadinessFailsTheTurnBeforeAnyEvent() async throws {
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.event(.assistantMessageDelta("x")), .complete()],
                                                                          readinessFailure: AgentRuntimeError(code: .providerOverloaded, message: "busy"))])
        let runtime = try makeRuntime(backend)
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "x"), in: thread.id))
        #expect((error as? AgentRuntimeError)?.code == .providerOverloaded)
        #expect(events.map(name) == ["turnStarted", "turnFailed(provider_overloaded)"])
    }

    @Test func aPausedConsumerLosesNothingThroughACapacityTwoQueue() async throws {
        let text = String(repeating: "x", count: 10_000)
        let backend = FixtureAgentBackend(turns: [.reply(text, deltaLength: 1)])
        let runtime = try makeRuntime(backend, bufferedEvents: 2)
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "x"), in: thread.id)
        let channel = stream.consumer.channel
        // The consumer is paused: the producer fills the queue to its capacity and waits there.
        await eventually("the queue filled") { channel.peakBufferedCount >= 2 }
        try await Task.sleep(for: .milliseconds(20))
        #expect(channel.peakBufferedCount == 2)
        let (events, error) = await collect(stream)
        #expect(error == nil)
        let deltas = events.filter { if case .assistantMessageDelta = $0 { return true } else { return false } }
        #expect(deltas.count == 10_000)
        #expect(events.count == 10_003)
        #expect(events.last.map(name) == "turnCompleted")
        // Only the terminal event may use a reserved slot beyond the capacity.
        #expect(channel.peakBufferedCount <= 2 + AgentEventChannel<AgentEvent>.reservedLifecycleSlots)
    }
}

@Suite struct AgentRuntimeCommitTests {
    @Test func aCommitAlreadyUnderwayFinishesWhenTheConsumerLeaves() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("kept")])
        let store = GatedStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        store.close(atAppend: 2)  // the input is append 1; the commit is append 2
        let stream = try await runtime.stream(Request(text: "x"), in: thread.id)
        let consumer = Task { for try await _ in stream {} }
        await eventually("the commit reached the blocked store") { store.blockedWrites == 1 }
        consumer.cancel()
        _ = await consumer.result
        store.open()
        await eventually("the thread is free again") { runtime.activeTurnID(in: thread.id) == nil }
        await runtime.flushPendingWrites()
        #expect(try await store.latestTurn(of: thread.id)?.status == .completed)
        #expect(describe(try await history(store, thread.id)) == ["event turn_started", "user: x", "assistant: kept", "event turn_completed"])
    }
}

@Suite struct AgentRuntimeStorageRecoveryTests {
    @Test func transientStoreFailuresAreRetriedAndNothingIsLost() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("fine")])
        let store = FlakyStateStore(failures: 3)
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        #expect(try await runtime.send(Request(text: "x"), in: thread.id) == "fine")
        #expect(store.failuresLeft == 0)
        #expect(describe(try await history(store, thread.id)) == ["event turn_started", "user: x", "assistant: fine", "event turn_completed"])
    }

    @Test func aTurnLeftRunningByACrashIsClosedAsInterruptedBeforeTheNextTurn() async throws {
        let store = InMemoryRuntimeStateStore()
        let crashed = AgentTurn(threadID: AgentThreadID(), status: .running)
        var thread = AgentThread(id: crashed.threadID, status: .running)
        thread.title = "after a crash"
        try await store.upsertThread(thread)
        try await store.upsertTurn(crashed)
        let backend = FixtureAgentBackend(turns: [.reply("back")])
        let runtime = try makeRuntime(backend, store: store)
        #expect(try await runtime.send(Request(text: "hello again"), in: thread.id) == "back")
        #expect(describe(try await history(store, thread.id)) == [
            "event turn_interrupted", "event turn_started", "user: hello again", "assistant: back", "event turn_completed",
        ])
        #expect(try await store.thread(thread.id)?.status == .idle)
    }

    @Test func hostEditsDuringATurnKeepTheRuntimesStatusAndTheHostsChange() async throws {
        // The turn waits on a clock only the test moves: the edit lands while it runs, however slow the machine.
        let clock = ManualClock()
        let backend = FixtureAgentBackend(
            turns: [FixtureAgentBackend.Turn([.sleep(.milliseconds(50)), .event(.assistantMessageDelta("x")), .complete()])], clock: clock
        )
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread(title: "before")
        let stream = try await runtime.stream(Request(text: "x"), in: thread.id)
        await clock.waitForSleepers(count: 1)
        let edited = try await runtime.updateThread(thread.id) { $0.title = "renamed"; $0.status = .idle }
        #expect(edited.status == .running, "the status is the runtime's")
        clock.advance(by: .milliseconds(50))
        _ = await collect(stream)
        let stored = try #require(try await store.thread(thread.id))
        #expect(stored.title == "renamed")
        #expect(stored.status == .idle)
    }

    @Test func deltasWithoutACompletedMessageStillBecomeTheReply() async throws {
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.event(.assistantMessageDelta("Hel")), .event(.assistantMessageDelta("lo")), .complete()])])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        #expect(try await runtime.send(Request(text: "x"), in: thread.id) == "Hello")
        #expect(describe(try await history(store, thread.id)) == ["event turn_started", "user: x", "assistant: Hello", "event turn_completed"])
    }
}
