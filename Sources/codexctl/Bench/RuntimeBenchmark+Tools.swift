import CodexCore
import CodexKitTesting
import CodexRuntime
import CodexSchema
import Foundation

extension RuntimeBenchmark {
    /// Turns per tool-batch run.
    static let toolTurns = 1_000
    /// Calls per batch.
    static let toolBatchSize = 4

    /// Per-call overhead of the runtime's tool batches: `toolTurns` turns of a `toolBatchSize`-call
    /// parallel batch of no-op tools, minus the same turns without calls, per call; next to the same
    /// executors called in a bare `TaskGroup` of `toolBatchSize` tasks, per call.
    func measureToolBatches(into report: inout BenchReport) async throws {
        let noOp = AgentTool(definition: ToolDefinition(
            name: "noop", description: "Does nothing.", inputSchema: ["type": "object"], supportsParallelExecution: true
        )) { invocation, context in context.success("ok") }
        let calls = (0..<Self.toolBatchSize).map { ToolInvocation(id: ToolInvocationID(rawValue: "c\($0)"), toolName: "noop", arguments: "{}") }
        let withTools = FixtureAgentBackend.Turn([.event(.toolCallsRequested(calls)), .awaitToolResults, .complete()])
        let withoutTools = FixtureAgentBackend.Turn([.complete()])
        var batchTimes: [Double] = []
        var plainTimes: [Double] = []
        var bareTimes: [Double] = []
        for _ in 0..<runs {
            batchTimes.append(try await timeTurns(withTools, tools: [noOp]))
            plainTimes.append(try await timeTurns(withoutTools, tools: [noOp]))
            bareTimes.append(try await timeBareGroups(noOp, calls: calls))
        }
        let totalCalls = Double(Self.toolTurns * Self.toolBatchSize)
        let perCall = max(0, Self.median(batchTimes) - Self.median(plainTimes)) / totalCalls
        report.results.append(BenchResult(
            name: "tool batches", mode: "\(Self.toolTurns) turns of a \(Self.toolBatchSize)-call parallel batch of no-op tools, per call (turns without calls subtracted)",
            metric: "latency", value: perCall * 1_000_000, unit: "µs",
            baseline: ("the same executors in a bare TaskGroup, per call", Self.median(bareTimes) / totalCalls * 1_000_000)
        ))
        report.results.append(BenchResult(
            name: "tool batches", mode: "\(Self.toolTurns) turns with the batch, whole turn", metric: "latency",
            value: Self.median(batchTimes) / Double(Self.toolTurns) * 1_000_000, unit: "µs"
        ))
    }

    private func timeTurns(_ turn: FixtureAgentBackend.Turn, tools: [AgentTool]) async throws -> Double {
        let runtime = try AgentRuntime(configuration: .init(
            backend: FixtureAgentBackend(turns: [turn]), stateStore: InMemoryRuntimeStateStore(), turnLimits: .unlimited, tools: tools
        ))
        let thread = try await runtime.createThread()
        let clock = ContinuousClock()
        let started = clock.now
        for _ in 0..<Self.toolTurns {
            for try await _ in try await runtime.stream(Request(text: "bench", executionMode: .ephemeral), in: thread.id) {}
        }
        return (clock.now - started).inSeconds
    }

    private func timeBareGroups(_ tool: AgentTool, calls: [ToolInvocation]) async throws -> Double {
        let thread = AgentThreadID(rawValue: "bench")
        let turn = AgentTurnID(rawValue: "bench")
        let clock = ContinuousClock()
        let started = clock.now
        for _ in 0..<Self.toolTurns {
            let results = try await withThrowingTaskGroup(of: ToolResultEnvelope.self) { group in
                for call in calls {
                    group.addTask {
                        try await tool.execute(call, ToolExecutionContext(invocation: call, threadID: thread, turnID: turn, arguments: [:]))
                    }
                }
                return try await group.reduce(into: 0) { count, _ in count += 1 }
            }
            guard results == calls.count else { throw AgentRuntimeError(code: .invalidRequest, message: "a bare call was lost") }
        }
        return (clock.now - started).inSeconds
    }
}
