@testable import CodexRuntime
import CodexCore
import CodexTestSupport
import Foundation
import Testing

/// `observeThreads()`, `observeThread(id:)` and `observeMessages(in:)`: the current value first, one
/// snapshot per accepted write after it, the latest-value and bounded policies, and clean endings.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct RuntimeObservationTests {
    private func runtime(_ turns: [FixtureAgentBackend.Turn] = [.reply("Hi.", deltaLength: 100)], store: any RuntimeStateStore = InMemoryRuntimeStateStore()) throws -> AgentRuntime {
        try AgentRuntime(configuration: .init(backend: FixtureAgentBackend(turns: turns), stateStore: store))
    }

    @Test func threadsAreObservedNowAndAfterEachCreateUpdateAndDelete() async throws {
        let runtime = try runtime()
        var threads = runtime.observeThreads().makeAsyncIterator()
        #expect(try await threads.next() == [])
        let a = try await runtime.createThread(title: "A")
        #expect(try await threads.next()?.map(\.title) == ["A"])
        _ = try await runtime.updateThread(a.id) { $0.title = "A2" }
        #expect(try await threads.next()?.map(\.title) == ["A2"])
        try await runtime.deleteThread(a.id)
        #expect(try await threads.next() == [])
    }

    @Test func aThreadsStatusIsObservedThroughATurnAndTheSequenceEndsWhenItIsDeleted() async throws {
        let runtime = try runtime()
        let thread = try await runtime.createThread()
        var updates = runtime.observeThread(id: thread.id, buffering: .buffered()).makeAsyncIterator()
        #expect(try await updates.next()?.status == .idle)
        _ = try await runtime.send(Request(text: "Hello"), in: thread.id)
        #expect(try await updates.next()?.status == .running)
        #expect(try await updates.next()?.status == .idle)
        try await runtime.deleteThread(thread.id)
        #expect(try await updates.next() == nil)
        await eventually("the finished observation unsubscribed") { runtime.changes.subscriberCount == 0 }
    }

    @Test func messagesArriveAsTheTurnCommitsThem() async throws {
        let runtime = try runtime()
        let thread = try await runtime.createThread()
        var messages = runtime.observeMessages(in: thread.id, buffering: .buffered()).makeAsyncIterator()
        #expect(try await messages.next() == [])
        _ = try await runtime.send(Request(text: "Hello"), in: thread.id)
        #expect(try await messages.next()?.map { "\($0.role.rawValue): \($0.text)" } == ["user: Hello"])
        #expect(try await messages.next()?.map { "\($0.role.rawValue): \($0.text)" } == ["user: Hello", "assistant: Hi."])
        _ = try await runtime.send(Request(text: "Again"), in: thread.id)
        #expect(try await messages.next()?.count == 3)
        #expect(try await messages.next()?.map(\.text).suffix(2) == ["Again", "Hi."])
    }

    @Test func aLaterObservationStartsFromTheWholeStoredHistory() async throws {
        let runtime = try runtime()
        let thread = try await runtime.createThread()
        for index in 0..<3 { _ = try await runtime.send(Request(text: "q\(index)"), in: thread.id) }
        var messages = runtime.observeMessages(in: thread.id).makeAsyncIterator()
        #expect(try await messages.next()?.map(\.text) == ["q0", "Hi.", "q1", "Hi.", "q2", "Hi."])
        let page = try await runtime.history(of: thread.id, query: AgentHistoryQuery(limit: 3))
        #expect(describe(page.items) == ["event turn_started", "user: q0", "assistant: Hi."])
        #expect(page.nextCursor != nil)
    }

    @Test func observingAMissingThreadFailsWithThreadNotFound() async throws {
        let runtime = try runtime()
        let missing = AgentThreadID()
        var thread = runtime.observeThread(id: missing).makeAsyncIterator()
        let threadError = await #expect(throws: AgentRuntimeError.self) { _ = try await thread.next() }
        #expect(threadError?.code == .threadNotFound)
        var messages = runtime.observeMessages(in: missing).makeAsyncIterator()
        let messagesError = await #expect(throws: AgentRuntimeError.self) { _ = try await messages.next() }
        #expect(messagesError?.code == .threadNotFound)
        let historyError = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.history(of: missing) }
        #expect(historyError?.code == .threadNotFound)
    }

    @Test func aBufferedReaderThatFallsBehindGetsWhatWasBufferedThenAnOverflowError() async throws {
        let runtime = try runtime()
        let observation = runtime.observeThreads(buffering: .buffered(limit: 2))
        var threads = observation.makeAsyncIterator()
        for index in 0..<5 { _ = try await runtime.createThread(title: "t\(index)") }
        // The observation ended (and unsubscribed) at the first snapshot that did not fit.
        #expect(runtime.changes.subscriberCount == 0)
        #expect(try await threads.next()?.count == 0)
        #expect(try await threads.next()?.count == 1)
        let overflow = await #expect(throws: AgentRuntimeError.self) { _ = try await threads.next() }
        #expect(overflow?.code == .observationBufferOverflow)
    }

    @Test func aLatestValueReaderThatFallsBehindSkipsToTheNewestSnapshot() async throws {
        let runtime = try runtime()
        var threads = runtime.observeThreads().makeAsyncIterator()
        #expect(try await threads.next() == [])
        for index in 0..<20 { _ = try await runtime.createThread(title: "t\(index)") }
        // Only the newest of the 20 snapshots was kept for the reader.
        #expect(try await threads.next()?.count == 20)
        #expect(runtime.changes.subscriberCount == 1)
    }

    @Test func aBufferLimitIsClampedToItsRange() {
        #expect(AgentObservationBuffering.buffered(limit: 0).bufferLimit == 1)
        #expect(AgentObservationBuffering.buffered(limit: 100_000).bufferLimit == 4096)
        #expect(AgentObservationBuffering.buffered().bufferLimit == 64)
        #expect(AgentObservationBuffering.latest.bufferLimit == nil)
    }

    @Test func endingTheReadersLoopStopsTheObservation() async throws {
        let runtime = try runtime()
        let thread = try await runtime.createThread()
        do {
            for try await messages in runtime.observeMessages(in: thread.id) where messages.isEmpty { break }
        }
        await eventually("the released observation unsubscribed") { runtime.changes.subscriberCount == 0 }
        let reader = Task {
            for try await _ in runtime.observeThreads() {}
        }
        await eventually("the reader subscribed") { runtime.changes.subscriberCount == 1 }
        reader.cancel()
        _ = await reader.result
        await eventually("the cancelled observation unsubscribed") { runtime.changes.subscriberCount == 0 }
    }

    @Test func aSteeredMessageIsObservedWhenTheTurnConsumesIt() async throws {
        let runtime = try runtime([FixtureAgentBackend.Turn([.consumeSteering, .event(.assistantMessageDelta("Short.")), .complete()], acceptsSteering: true)])
        let thread = try await runtime.createThread()
        let execution = try await runtime.start(Request(text: "Explain"), in: thread.id)
        try await execution.steer("Keep it short.")
        _ = await collect(execution.events)
        var messages = runtime.observeMessages(in: thread.id).makeAsyncIterator()
        #expect(try await messages.next()?.map(\.text) == ["Explain", "Keep it short.", "Short."])
    }
}
