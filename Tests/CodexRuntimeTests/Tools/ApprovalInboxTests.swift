import CodexCore
import CodexRuntime
import CodexSchema
import CodexTestSupport
import Foundation
import Testing

/// The approval inbox driven by a host task, through the runtime.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct ApprovalInboxTests {
    private func gatedTool(_ runs: Counter) -> AgentTool {
        AgentTool(definition: ToolDefinition(
            name: "pay", description: "Pays.", inputSchema: ["type": "object"], approvalPolicy: .requiresApproval, approvalMessage: "Pay the invoice?"
        )) { invocation in
            runs.increment()
            return .success(invocation, text: "paid")
        }
    }

    @Test func aHostTaskApprovesOneCallAndDeniesTheNext() async throws {
        let runs = Counter()
        let inbox = ApprovalInbox()
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([
            .event(.toolCallsRequested([call("p1", "pay"), call("p2", "pay")])), .awaitToolResults, .complete(),
        ])])
        let runtime = try AgentRuntime(configuration: .init(
            backend: backend, approvalPresenter: inbox, stateStore: InMemoryRuntimeStateStore(), tools: [gatedTool(runs)]
        ))
        let host = Task {
            var seen: [AgentApprovalRequest] = []
            for await request in inbox.requests {
                seen.append(request)
                #expect(inbox.pending.map(\.id) == [request.id])
                #expect(inbox.resolve(request.id, seen.count == 1 ? .approved : .denied))
                #expect(!inbox.resolve(request.id, .approved))
                if seen.count == 2 { break }
            }
            return seen
        }
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "pay both"), in: thread.id))
        let seen = await host.value
        #expect(error == nil)
        #expect(seen.map(\.toolInvocation.id.rawValue) == ["p1", "p2"])
        #expect(seen.map(\.message) == ["Pay the invoice?", "Pay the invoice?"])
        #expect(runs.count == 1)
        #expect(backend.submittedResults.map(\.status) == [.success, .denied])
        #expect(events.map(name).filter { $0.hasPrefix("approval") } == [
            "approvalRequested", "approvalResolved(approved)", "approvalRequested", "approvalResolved(denied)",
        ])
        #expect(inbox.pending.isEmpty)
    }

    @Test func cancellingTheTurnWithdrawsThePendingRequestAndALateAnswerChangesNothing() async throws {
        let runs = Counter()
        let inbox = ApprovalInbox()
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.event(.toolCallRequested(call("p1", "pay"))), .awaitToolResults, .complete()])])
        let store = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(backend: backend, approvalPresenter: inbox, stateStore: store, tools: [gatedTool(runs)]))
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "pay"), in: thread.id)
        let consumer = Task { for try await _ in stream {} }
        var requests = inbox.requests.makeAsyncIterator()
        let request = try #require(await requests.next())
        #expect(inbox.pending.map(\.id) == [request.id])
        consumer.cancel()
        _ = await consumer.result
        await eventually("the request is withdrawn") { inbox.pending.isEmpty }
        #expect(!inbox.resolve(request.id, .approved))
        await eventually("the turn is recorded interrupted") { (try? await store.latestTurn(of: thread.id))?.status == .interrupted }
        #expect(runs.count == 0)
        #expect(backend.submittedResults.isEmpty)
    }
}
