import CodexCore
import CodexRuntime
import CodexSchema
import CodexTestSupport
import Foundation
import Testing

/// Denies every approval request and counts them.
final class DenyingPresenter: AgentApprovalPresenting {
    let asked = Counter()
    func requestApproval(_ request: AgentApprovalRequest) async throws -> AgentApprovalDecision {
        asked.increment()
        return .denied
    }
}

@Suite struct AgentRuntimeLimitTests {
    private func lookupTool(_ runs: Counter) -> AgentTool {
        AgentTool(definition: ToolDefinition(name: "lookup", description: "Looks up.", inputSchema: ["type": "object"])) { invocation in
            runs.increment()
            return .success(invocation, text: "42")
        }
    }

    @Test func toolRoundTripsAreExecutedSubmittedAndPersistedInPairs() async throws {
        let runs = Counter()
        let done = AgentMessage(threadID: AgentThreadID(rawValue: ""), role: .assistant, text: "done", phase: .finalAnswer)
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([
            .event(.toolCallRequested(call("c1"))), .awaitToolResults,
            .event(.toolCallsRequested([call("c2", "missing"), call("c3")])), .awaitToolResults,
            .event(.assistantMessageCompleted(done)), .complete(),
        ])])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store, tools: [lookupTool(runs)])
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "go"), in: thread.id))
        #expect(error == nil)
        #expect(events.map(name) == [
            "turnStarted", "toolStarted(c1)", "toolFinished(c1 success)", "toolStarted(c2)", "toolFinished(c2 failure)",
            "toolStarted(c3)", "toolFinished(c3 success)", "committed(assistant: done)", "turnCompleted",
        ])
        #expect(runs.count == 2)
        #expect(backend.submittedResults.map(\.invocationID.rawValue) == ["c1", "c2", "c3"])
        #expect(backend.submittedResults.map(\.status) == [.success, .failure, .success])
        #expect(describe(try await history(store, thread.id)) == [
            "event turn_started", "user: go", "call lookup#c1", "result lookup#c1 success",
            "call missing#c2", "call lookup#c3", "result missing#c2 failure", "result lookup#c3 success",
            "assistant: done", "event turn_completed",
        ])
    }

    @Test func aBatchThatDoesNotFitTheRemainingBudgetFailsBeforeAnyExecutorStarts() async throws {
        let runs = Counter()
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([
            .event(.toolCallRequested(call("c1"))), .awaitToolResults,
            .event(.toolCallsRequested([call("c2"), call("c3")])), .awaitToolResults, .complete(),
        ])])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store, limits: AgentTurnLimits(maximumToolCalls: 2, maximumDuration: 300), tools: [lookupTool(runs)])
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "go"), in: thread.id))
        let failure = try #require(error as? AgentRuntimeError)
        #expect(failure.code == .executionLimitExceeded)
        #expect(failure.executionLimit == .toolCalls)
        #expect(runs.count == 1, "only the first call ran; the batch of two did not fit the one call left")
        #expect(events.map(name) == ["turnStarted", "toolStarted(c1)", "toolFinished(c1 success)", "turnFailed(execution_limit_exceeded)"])
        let turn = try #require(try await store.latestTurn(of: thread.id))
        #expect(turn.status == .failed)
        #expect(turn.failure?.executionLimit == .toolCalls)
        #expect(try await store.thread(thread.id)?.status == .idle)
    }

    @Test func deniedAndUnknownCallsCountAgainstTheBudgetInEphemeralTurnsToo() async throws {
        let presenter = DenyingPresenter()
        let gated = AgentTool(definition: ToolDefinition(name: "delete_all", description: "Deletes.", inputSchema: ["type": "object"], approvalPolicy: .requiresApproval)) {
            .success($0, text: "deleted")
        }
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([
            .event(.toolCallRequested(call("c1", "delete_all"))), .awaitToolResults,
            .event(.toolCallRequested(call("c2", "nope"))), .awaitToolResults, .complete(),
        ])])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store, limits: AgentTurnLimits(maximumToolCalls: 1, maximumDuration: nil), tools: [gated], approvalPresenter: presenter)
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "go", executionMode: .ephemeral), in: thread.id))
        #expect((error as? AgentRuntimeError)?.executionLimit == .toolCalls)
        #expect(events.map(name) == [
            "turnStarted", "toolStarted(c1)", "approvalRequested", "approvalResolved(denied)", "toolFinished(c1 denied)",
            "turnFailed(execution_limit_exceeded)",
        ])
        #expect(presenter.asked.count == 1)
        #expect(try await history(store, thread.id).isEmpty, "ephemeral turns write no history")
        #expect(try await store.latestTurn(of: thread.id) == nil)
    }

    @Test func theDurationBudgetFailsAHangingTurnForPlainStructuredAndEphemeralTurns() async throws {
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.hang])])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store, limits: AgentTurnLimits(maximumToolCalls: nil, maximumDuration: 0.2))
        let thread = try await runtime.createThread()
        let plain = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.send(Request(text: "x"), in: thread.id) }
        #expect(plain?.executionLimit == .duration)
        let turn = try #require(try await store.latestTurn(of: thread.id))
        #expect(turn.status == .failed)
        #expect(turn.failure?.executionLimit == .duration)
        let structured = await #expect(throws: AgentRuntimeError.self) {
            _ = try await runtime.send(Request(text: "x"), in: thread.id, response: ShippingReplyDraft.self)
        }
        #expect(structured?.executionLimit == .duration)
        let ephemeral = await #expect(throws: AgentRuntimeError.self) {
            _ = try await runtime.send(Request(text: "x", executionMode: .ephemeral), in: thread.id)
        }
        #expect(ephemeral?.executionLimit == .duration)
        #expect(backend.requests.count == 3)
        #expect(try await store.thread(thread.id)?.status == .idle)
    }

    @Test func aResultWithAnotherIdentityIsRecordedAsAFailureForTheOriginalCall() async throws {
        let impostor = AgentTool(definition: ToolDefinition(name: "lookup", description: "Looks up.", inputSchema: ["type": "object"])) { invocation in
            ToolResultEnvelope(invocationID: ToolInvocationID(rawValue: "other"), toolName: "lookup", status: .success, content: [.text("x")])
        }
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.event(.toolCallRequested(call("c1"))), .awaitToolResults, .complete()])])
        let runtime = try makeRuntime(backend, tools: [impostor])
        let thread = try await runtime.createThread()
        _ = try await runtime.send(Request(text: "x"), in: thread.id)
        #expect(backend.submittedResults.map(\.invocationID.rawValue) == ["c1"])
        #expect(backend.submittedResults.map(\.status) == [.failure])
    }

    @Test func duplicateOrInvalidToolNamesFailConstruction() {
        let tool = AgentTool(definition: ToolDefinition(name: "a", description: "", inputSchema: ["type": "object"])) { .success($0, text: "") }
        let duplicate = #expect(throws: AgentRuntimeError.self) { try makeRuntime(FixtureAgentBackend(turns: []), tools: [tool, tool]) }
        #expect(duplicate?.code == .invalidToolDefinition)
        var bad = tool
        bad.definition.name = "bad name"
        let invalid = #expect(throws: AgentRuntimeError.self) { try makeRuntime(FixtureAgentBackend(turns: []), tools: [bad]) }
        #expect(invalid?.code == .invalidToolDefinition)
    }
}

/// A custom backend that never produces an event and records its explicit interruption.
final class SilentInterruptibleBackend: AgentBackend {
    let interrupted = Counter()
    func startTurn(_ request: AgentBackendTurnRequest) async throws -> AgentTurnStream {
        let (events, continuation) = AsyncThrowingStream<AgentBackendEvent, any Error>.makeStream()
        let interrupted = self.interrupted
        return AgentTurnStream(events: events, interrupt: {
            interrupted.increment()
            continuation.finish(throwing: CancellationError())
        })
    }
}

@Suite struct AgentRuntimeBackendInterruptTests {
    @Test func anExhaustedBudgetInterruptsACustomBackendThatOptedIn() async throws {
        let backend = SilentInterruptibleBackend()
        let runtime = try AgentRuntime(configuration: .init(
            backend: backend, stateStore: InMemoryRuntimeStateStore(), turnLimits: AgentTurnLimits(maximumToolCalls: nil, maximumDuration: 0.1)
        ))
        let thread = try await runtime.createThread()
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.send(Request(text: "x"), in: thread.id) }
        #expect(error?.executionLimit == .duration)
        #expect(backend.interrupted.count >= 1)
    }

    @Test func runtimeInterruptReachesACustomBackendThatOptedIn() async throws {
        let backend = SilentInterruptibleBackend()
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore()))
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "x"), in: thread.id)
        try await runtime.interrupt(in: thread.id)
        let (events, error) = await collect(stream)
        #expect(error is CancellationError)
        #expect(events.map(name).last == "turnInterrupted(interrupted_by_host)")
        #expect(backend.interrupted.count >= 1)
    }
}
