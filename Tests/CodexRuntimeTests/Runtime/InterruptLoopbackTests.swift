@testable import CodexRuntime
import CodexCore
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// `interrupt(in:)` over the real transport while the response streams, while a host tool runs and
/// while an approval waits: the turn is recorded interrupted, the stream ends with `CancellationError`
/// after `.turnInterrupted`, and no further model request is made.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct InterruptLoopbackTests {
    private typealias H = BackendHarness

    /// The first pass asks for one call of `tool`; a second pass would answer.
    private func toolCallServer(_ tool: String) throws -> LoopbackHTTPServer {
        var first = ResponsesScript()
        first.created("resp_1")
        first.functionCallDone("fc_1", callID: "call_1", name: tool, arguments: "{}", index: 0)
        first.completed("resp_1")
        return try LoopbackHTTPServer(replies: [.sse(first.events), ResponsesScript.completedReply("resp_2", "Never sent.")])
    }

    private func expectInterrupted(_ result: (events: [AgentEvent], error: (any Error)?), store: InMemoryRuntimeStateStore, thread: AgentThreadID) async throws {
        #expect(result.error is CancellationError)
        #expect(result.events.map(name).last == "turnInterrupted(interrupted_by_host)")
        #expect(!result.events.contains { if case .turnCompleted = $0 { return true } else { return false } })
        #expect(try await store.latestTurn(of: thread)?.status == .interrupted)
        let idle = try #require(try await store.thread(thread))
        #expect(idle.status == .idle)
        #expect(idle.pending == nil)
        #expect(describe(try await history(store, thread)).last == "event turn_interrupted")
    }

    @Test func interruptingWhileTheResponseStreamsClosesItsConnection() async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        script.delta("msg_1", "first")
        let server = try LoopbackHTTPServer(replies: [H.holdingReply(script.text)])
        defer { server.shutdown() }
        let store = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(backend: try H.backend(server), stateStore: store))
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "x"), in: thread.id)
        let seen = Counter()
        let consumer = Task {
            var events: [AgentEvent] = []
            do {
                for try await event in stream {
                    events.append(event)
                    if case .assistantMessageDelta = event { seen.increment() }
                }
                return (events, nil as (any Error)?)
            } catch {
                return (events, error)
            }
        }
        let result = await withTaskCancellationHandler {
            await eventually("the first delta arrived") { seen.count == 1 }
            try? await runtime.interrupt(in: thread.id)
            return await consumer.value
        } onCancel: { consumer.cancel() }
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard), "the loopback server saw the connection closed")
        try await expectInterrupted(result, store: store, thread: thread.id)
        #expect(server.requests.count == 1)
    }

    @Test func interruptingWhileAHostToolRunsCancelsItAndSendsNothingMore() async throws {
        let server = try toolCallServer("slow")
        defer { server.shutdown() }
        let cancelled = Counter()
        let started = AsyncStream<Void>.makeStream()
        let store = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(
            backend: try H.backend(server), stateStore: store, tools: [slowTool(started: started.continuation, cancelled: cancelled)]
        ))
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "x"), in: thread.id)
        let consumer = Task { await collect(stream) }
        let result = await withTaskCancellationHandler {
            var starts = started.stream.makeAsyncIterator()
            _ = await starts.next()
            try? await runtime.interrupt(in: thread.id)
            return await consumer.value
        } onCancel: { consumer.cancel() }
        try await expectInterrupted(result, store: store, thread: thread.id)
        #expect(cancelled.count == 1)
        #expect(server.requests.count == 1, "no pass carried a tool result")
    }

    @Test func interruptingWhileAnApprovalWaitsWithdrawsItAndSendsNothingMore() async throws {
        let server = try toolCallServer("pay")
        defer { server.shutdown() }
        let inbox = ApprovalInbox()
        let runs = Counter()
        let pay = AgentTool(definition: ToolDefinition(name: "pay", description: "Pays.", inputSchema: ["type": "object"], approvalPolicy: .requiresApproval)) {
            runs.increment()
            return .success($0, text: "paid")
        }
        let store = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(backend: try H.backend(server), approvalPresenter: inbox, stateStore: store, tools: [pay]))
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "pay"), in: thread.id)
        let consumer = Task { await collect(stream) }
        let (request, result) = try await withTaskCancellationHandler {
            var requests = inbox.requests.makeAsyncIterator()
            let request = await requests.next()
            try await eventually("the thread shows the approval wait") { try await store.thread(thread.id)?.pending?.kind == .approval }
            try? await runtime.interrupt(in: thread.id)
            return (request, await consumer.value)
        } onCancel: { consumer.cancel() }
        try await expectInterrupted(result, store: store, thread: thread.id)
        let pending = try #require(request)
        #expect(!inbox.resolve(pending.id, .approved), "the withdrawn request takes no answer")
        #expect(runs.count == 0)
        #expect(server.requests.count == 1)
    }
}
