import CodexCore
import CodexRuntime
import CodexSchema
import CodexTestSupport
import Foundation
import Testing

/// The thread's one outstanding wait while host tools run or wait for approval.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct ToolPendingStateTests {
    @Test func aRunningToolAndAnApprovalShowAsTheThreadsPendingWait() async throws {
        let probe = ToolProbe()
        let inbox = ApprovalInbox()
        let store = InMemoryRuntimeStateStore()
        let lookup = AgentTool(definition: ToolDefinition(name: "lookup", description: "Looks up.", inputSchema: ["type": "object"])) { invocation in
            probe.open("running")
            await probe.wait(for: "finish")
            return .success(invocation, text: "42")
        }
        let pay = AgentTool(definition: ToolDefinition(name: "pay", description: "Pays.", inputSchema: ["type": "object"], approvalPolicy: .requiresApproval)) {
            .success($0, text: "paid")
        }
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([
            .event(.toolCallRequested(call("c1"))), .awaitToolResults,
            .event(.toolCallRequested(call("c2", "pay"))), .awaitToolResults, .complete(),
        ])])
        let runtime = try AgentRuntime(configuration: .init(backend: backend, approvalPresenter: inbox, stateStore: store, tools: [lookup, pay]))
        let thread = try await runtime.createThread()
        let turn = Task { try await runtime.send(Request(text: "go"), in: thread.id) }
        try await withTaskCancellationHandler {
            await probe.wait(for: "running")
            let running = try #require(try await store.thread(thread.id))
            #expect(running.status == .waiting)
            #expect(running.pending?.kind == .toolResult)
            #expect(running.pending?.invocation.id == "c1")
            #expect(running.pending?.turnID == (try await store.latestTurn(of: thread.id))?.id)
            probe.open("finish")

            var requests = inbox.requests.makeAsyncIterator()
            let request = try #require(await requests.next())
            let approving = try #require(try await store.thread(thread.id))
            #expect(approving.status == .waiting)
            #expect(approving.pending?.kind == .approval)
            #expect(approving.pending?.approvalRequestID == request.id)
            #expect(approving.pending?.invocation.id == "c2")
            #expect(inbox.resolve(request.id, .approved))
            _ = try await turn.value
        } onCancel: { turn.cancel() }
        let finished = try #require(try await store.thread(thread.id))
        #expect(finished.status == .idle)
        #expect(finished.pending == nil)
    }

    @Test func anInterruptedWaitLeavesNoPendingState() async throws {
        let inbox = ApprovalInbox()
        let store = InMemoryRuntimeStateStore()
        let pay = AgentTool(definition: ToolDefinition(name: "pay", description: "Pays.", inputSchema: ["type": "object"], approvalPolicy: .requiresApproval)) {
            .success($0, text: "paid")
        }
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.event(.toolCallRequested(call("c1", "pay"))), .awaitToolResults, .complete()])])
        let runtime = try AgentRuntime(configuration: .init(backend: backend, approvalPresenter: inbox, stateStore: store, tools: [pay]))
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "pay"), in: thread.id)
        let consumer = Task { for try await _ in stream {} }
        var requests = inbox.requests.makeAsyncIterator()
        _ = try #require(await requests.next())
        #expect(try await store.thread(thread.id)?.pending?.kind == .approval)
        consumer.cancel()
        _ = await consumer.result
        await eventually("the thread is idle again") { (try? await store.thread(thread.id))?.status == .idle }
        #expect(try await store.thread(thread.id)?.pending == nil)
    }

    @Test func anEphemeralTurnWritesNoPendingState() async throws {
        let store = InMemoryRuntimeStateStore()
        let seen = ToolProbe()
        let lookup = AgentTool(definition: ToolDefinition(name: "lookup", description: "Looks up.", inputSchema: ["type": "object"])) { invocation in
            let thread = try await store.threads().first
            seen.enter("\(thread?.status.rawValue ?? "none") \(thread?.pending == nil)")
            return .success(invocation, text: "42")
        }
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.event(.toolCallRequested(call("c1"))), .awaitToolResults, .complete()])])
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: store, tools: [lookup]))
        let thread = try await runtime.createThread()
        _ = try await runtime.send(Request(text: "aside", executionMode: .ephemeral), in: thread.id)
        #expect(seen.log == ["start idle true"])
    }
}
