import CodexCore
import CodexRuntime
import CodexSchema
import CodexTestSupport
import Foundation
import Testing

/// Approves every request, with a few yields so overlapping calls would interleave.
final class ApprovingPresenter: AgentApprovalPresenting {
    func requestApproval(_ request: AgentApprovalRequest) async throws -> AgentApprovalDecision {
        for _ in 0..<10 { await Task.yield() }
        return .approved
    }
}

/// Host tools run through the runtime: concurrency measured by the executors themselves, ordering,
/// barriers, argument checks, repeats and cancellation.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct ToolExecutionTests {
    private func probed(
        _ name: String, parallel: Bool, probe: ToolProbe, approval: ToolApprovalPolicy = .automatic,
        body: @escaping @Sendable (String) async throws -> Void = { _ in }
    ) -> AgentTool {
        AgentTool(definition: ToolDefinition(
            name: name, description: "The \(name) tool.", inputSchema: ["type": "object"], approvalPolicy: approval, supportsParallelExecution: parallel
        )) { invocation in
            let id = invocation.id.rawValue
            probe.enter(id)
            try await body(id)
            probe.leave(id)
            return .success(invocation, text: "result \(id)")
        }
    }

    private func run(
        _ batches: [[ToolInvocation]], tools: [AgentTool], cap: Int = 4, presenter: (any AgentApprovalPresenting)? = nil,
        limits: AgentTurnLimits = .default, store: InMemoryRuntimeStateStore = InMemoryRuntimeStateStore()
    ) async throws -> (events: [AgentEvent], error: (any Error)?, backend: FixtureAgentBackend, thread: AgentThreadID) {
        var steps: [FixtureAgentBackend.Step] = []
        for batch in batches {
            steps.append(.event(batch.count == 1 ? .toolCallRequested(batch[0]) : .toolCallsRequested(batch)))
            steps.append(.awaitToolResults)
        }
        steps.append(.complete())
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn(steps)])
        let runtime = try AgentRuntime(configuration: .init(
            backend: backend, approvalPresenter: presenter, stateStore: store, turnLimits: limits, tools: tools, maximumParallelToolCalls: cap
        ))
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "go"), in: thread.id))
        return (events, error, backend, thread.id)
    }

    @Test func fourEligibleCallsWithCapFourRunAllAtOnce() async throws {
        let probe = ToolProbe()
        let tool = probed("lookup", parallel: true, probe: probe) { _ in await probe.barrier(4) }
        let result = try await run([[call("c1"), call("c2"), call("c3"), call("c4")]], tools: [tool])
        #expect(result.error == nil)
        #expect(probe.peak == 4)
        #expect(result.backend.submittedResults.map(\.invocationID.rawValue) == ["c1", "c2", "c3", "c4"])
    }

    @Test func withCapTwoNoMoreThanTwoRunAtOnce() async throws {
        let probe = ToolProbe()
        let tool = probed("lookup", parallel: true, probe: probe) { _ in await probe.barrier(2) }
        let result = try await run([[call("c1"), call("c2"), call("c3"), call("c4")]], tools: [tool], cap: 2)
        #expect(result.error == nil)
        #expect(probe.peak == 2)
        #expect(probe.log.count == 8)
    }

    @Test func capsBelowOneBecomeOne() async throws {
        let probe = ToolProbe()
        let tool = probed("lookup", parallel: true, probe: probe) { _ in for _ in 0..<10 { await Task.yield() } }
        let result = try await run([[call("c1"), call("c2"), call("c3")]], tools: [tool], cap: 0)
        #expect(result.error == nil)
        #expect(probe.log == ["start c1", "end c1", "start c2", "end c2", "start c3", "end c3"])
    }

    @Test func aSerialToolIsABarrierInTheMiddleOfABatch() async throws {
        let probe = ToolProbe()
        let parallel = probed("lookup", parallel: true, probe: probe) { _ in await probe.barrier(2) }
        let serial = probed("write", parallel: false, probe: probe)
        let batch = [call("p1"), call("p2"), call("s", "write"), call("p3"), call("p4")]
        let result = try await run([batch], tools: [parallel, serial])
        #expect(result.error == nil)
        let log = probe.log
        let position = { (entry: String) in log.firstIndex(of: entry) ?? -1 }
        #expect(position("start s") > position("end p1") && position("start s") > position("end p2"))
        #expect(position("end s") < position("start p3") && position("end s") < position("start p4"))
        #expect(probe.peak == 2)
        #expect(result.backend.submittedResults.map(\.invocationID.rawValue) == ["p1", "p2", "s", "p3", "p4"])
    }

    @Test func approvalGatedCallsRunAloneEvenWhenFlaggedParallel() async throws {
        let probe = ToolProbe()
        let gated = probed("pay", parallel: true, probe: probe, approval: .requiresApproval) { _ in for _ in 0..<10 { await Task.yield() } }
        let result = try await run([[call("a1", "pay"), call("a2", "pay"), call("a3", "pay")]], tools: [gated], presenter: ApprovingPresenter())
        #expect(result.error == nil)
        #expect(probe.peak == 1)
        let toolEvents: [String] = result.events.map(name).filter { $0 != "turnStarted" && $0 != "turnCompleted" }
        let expected: [String] = ["a1", "a2", "a3"].flatMap { id -> [String] in
            ["toolStarted(\(id))", "approvalRequested", "approvalResolved(approved)", "toolFinished(\(id) success)"]
        }
        #expect(toolEvents == expected)
    }

    @Test func resultsKeepTheModelsOrderWhenExecutorsFinishInReverse() async throws {
        let probe = ToolProbe()
        let tool = probed("lookup", parallel: true, probe: probe) { id in
            switch id {
            case "c1": await probe.wait(for: "c2 done")
            case "c2": await probe.wait(for: "c3 done")
            default: break
            }
        }
        let finishing = AgentTool(definition: tool.definition) { invocation, context in
            let result = try await tool.execute(invocation, context)
            probe.open("\(invocation.id.rawValue) done")
            return result
        }
        let store = InMemoryRuntimeStateStore()
        let result = try await run([[call("c1"), call("c2"), call("c3")]], tools: [finishing], store: store)
        #expect(result.error == nil)
        #expect(result.events.map(name).filter { $0.hasPrefix("toolFinished") } == ["toolFinished(c3 success)", "toolFinished(c2 success)", "toolFinished(c1 success)"])
        #expect(result.backend.submittedResults.map(\.invocationID.rawValue) == ["c1", "c2", "c3"])
        #expect(describe(try await history(store, result.thread)) == [
            "event turn_started", "user: go", "call lookup#c1", "call lookup#c2", "call lookup#c3",
            "result lookup#c1 success", "result lookup#c2 success", "result lookup#c3 success", "event turn_completed",
        ])
    }

    @Test func argumentsThatBreakTheSchemaNeverReachTheExecutor() async throws {
        let runs = Counter()
        let order = AgentTool(name: "order", description: "Orders.", schema: .object(properties: ["sku": .string(), "quantity": .integer])) {
            (input: OrderInput, context) in
            runs.increment()
            return context.success("\(input.quantity) x \(input.sku)")
        }
        let calls = [
            call("ok", "order", arguments: #"{"sku":"A-1","quantity":2}"#),
            call("type", "order", arguments: #"{"sku":"A-1","quantity":"two"}"#),
            call("json", "order", arguments: "quantity=2"),
            call("deep", "order", arguments: String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)),
        ]
        let result = try await run([calls], tools: [order])
        #expect(result.error == nil)
        #expect(runs.count == 1)
        let submitted = result.backend.submittedResults
        #expect(submitted.map(\.status) == [.success, .failure, .failure, .failure])
        try #require(submitted.count == 4)
        #expect(submitted[0].joinedText == "2 x A-1")
        #expect(submitted[1].joinedText == "The arguments for 'order' do not match its input schema: /quantity: type: expected integer, found string. The tool was not run.")
        #expect(submitted[2].joinedText.hasPrefix("The arguments for 'order' are not valid JSON"))
        #expect(submitted[3].joinedText.hasPrefix("The arguments for 'order' are not valid JSON"))
    }

    @Test func aRepeatedCallIDIsAnsweredFromItsResultAndStillCounts() async throws {
        let probe = ToolProbe()
        let tool = probed("lookup", parallel: false, probe: probe)
        let store = InMemoryRuntimeStateStore()
        let result = try await run([[call("c1", arguments: #"{"q":1}"#)], [call("c1", arguments: #"{"q":1}"#)]], tools: [tool], store: store)
        #expect(result.error == nil)
        #expect(probe.log == ["start c1", "end c1"])
        #expect(result.backend.submittedResults.map(\.joinedText) == ["result c1", "result c1"])
        #expect(describe(try await history(store, result.thread)).filter { $0.contains("#c1") } == ["call lookup#c1", "result lookup#c1 success"])

        let limited = try await run(
            [[call("c1")], [call("c1")]], tools: [probed("lookup", parallel: false, probe: ToolProbe())],
            limits: AgentTurnLimits(maximumToolCalls: 1, maximumDuration: 300)
        )
        #expect((limited.error as? AgentRuntimeError)?.executionLimit == .toolCalls)
    }

    @Test func aCallRepeatedTwiceInALaterBatchIsAnsweredOnce() async throws {
        let probe = ToolProbe()
        let result = try await run([[call("c1")], [call("c1"), call("c1")]], tools: [probed("lookup", parallel: false, probe: probe)])
        #expect(result.error == nil)
        #expect(probe.log == ["start c1", "end c1"])
        #expect(result.backend.submittedResults.map(\.invocationID.rawValue) == ["c1", "c1"])
    }

    @Test func aRepeatedCallIDWithOtherArgumentsFailsTheTurn() async throws {
        let probe = ToolProbe()
        let result = try await run(
            [[call("c1", arguments: #"{"q":1}"#)], [call("c1", arguments: #"{"q":2}"#)]], tools: [probed("lookup", parallel: false, probe: probe)]
        )
        #expect((result.error as? AgentRuntimeError)?.code == .responsesToolCallConflict)
        #expect(probe.log == ["start c1", "end c1"])
        #expect(result.events.map(name).last == "turnFailed(responses_tool_call_conflict)")
    }

    @Test func cancellingTheTurnCancelsEveryRunningParallelExecutor() async throws {
        let cancelled = Counter()
        let started = AsyncStream<Void>.makeStream()
        let tool = slowTool(started: started.continuation, cancelled: cancelled)
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([
            .event(.toolCallsRequested([call("c1", "slow"), call("c2", "slow")])), .awaitToolResults, .complete(),
        ])])
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore(), tools: [tool]))
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "go"), in: thread.id)
        let consumer = Task { for try await _ in stream {} }
        await withTaskCancellationHandler {
            var starts = started.stream.makeAsyncIterator()
            _ = await starts.next()
            _ = await starts.next()
            consumer.cancel()
            _ = await consumer.result
            await eventually("both executors saw cancellation") { cancelled.count == 2 }
        } onCancel: { consumer.cancel() }
        #expect(backend.submittedResults.isEmpty)
    }

    @Test func aTypedToolIsSentStrictAndAnUntypedOneIsNot() {
        let typed = AgentTool(name: "order", description: "Orders.", schema: .object(properties: ["sku": .string()])) {
            (_: OrderInput, context) in context.success("")
        }
        #expect(typed.definition.fitsStrictMode)
        #expect(ToolDefinition(name: "ping", description: "Pings.", inputSchema: ["type": "object"]).fitsStrictMode == false)
    }
}
