import CodexCore
import CodexRuntime
import CodexSchema
import CodexTestSupport
import Foundation
import Testing

/// `interrupt(in:)` while host tools run or wait for approval: the executors and the presenter see it,
/// a late answer changes nothing, the turn is recorded interrupted.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct ToolInterruptionTests {
    @Test func interruptingDuringRunningToolsCancelsEveryExecutor() async throws {
        let cancelled = Counter()
        let started = AsyncStream<Void>.makeStream()
        let slow = slowTool(started: started.continuation, cancelled: cancelled)
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([
            .event(.toolCallsRequested([call("c1", "slow"), call("c2", "slow")])), .awaitToolResults, .complete(),
        ])])
        let store = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: store, tools: [slow]))
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "go"), in: thread.id)
        let consumer = Task { await collect(stream) }
        let result = await withTaskCancellationHandler {
            var starts = started.stream.makeAsyncIterator()
            _ = await starts.next()
            _ = await starts.next()
            try? await runtime.interrupt(in: thread.id)
            return await consumer.value
        } onCancel: { consumer.cancel() }
        #expect(result.error is CancellationError)
        #expect(result.events.map(name).contains { $0.hasPrefix("turnInterrupted") })
        #expect(cancelled.count == 2)
        #expect(backend.submittedResults.isEmpty)
        #expect(try await store.latestTurn(of: thread.id)?.status == .interrupted)
        let idle = try #require(try await store.thread(thread.id))
        #expect(idle.status == .idle)
        #expect(idle.pending == nil)
    }

    @Test func interruptingDuringAnApprovalWithdrawsItAndALateAnswerChangesNothing() async throws {
        let runs = Counter()
        let inbox = ApprovalInbox()
        let pay = AgentTool(definition: ToolDefinition(name: "pay", description: "Pays.", inputSchema: ["type": "object"], approvalPolicy: .requiresApproval)) {
            runs.increment()
            return .success($0, text: "paid")
        }
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.event(.toolCallRequested(call("c1", "pay"))), .awaitToolResults, .complete()])])
        let store = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(backend: backend, approvalPresenter: inbox, stateStore: store, tools: [pay]))
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "pay"), in: thread.id)
        let consumer = Task { await collect(stream) }
        let (request, result) = await withTaskCancellationHandler {
            var requests = inbox.requests.makeAsyncIterator()
            let request = await requests.next()
            try? await runtime.interrupt(in: thread.id)
            return (request, await consumer.value)
        } onCancel: { consumer.cancel() }
        let pending = try #require(request)
        #expect(result.error is CancellationError)
        #expect(inbox.pending.isEmpty)
        #expect(!inbox.resolve(pending.id, .approved))
        #expect(runs.count == 0)
        #expect(try await store.latestTurn(of: thread.id)?.status == .interrupted)
        #expect(try await store.thread(thread.id)?.pending == nil)
    }
}
