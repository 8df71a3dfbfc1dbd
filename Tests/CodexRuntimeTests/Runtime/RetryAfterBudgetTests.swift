@testable import CodexRuntime
import CodexCore
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// A server's `Retry-After` that asks for longer than the turn has left fails the turn at once with
/// `rate_limited` and the wait, instead of sleeping into the duration limit.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct RetryAfterBudgetTests {
    private typealias H = BackendHarness

    private static func rateLimited(retryAfter seconds: Int) -> ScriptedReply {
        .json(#"{"error":{"code":"rate_limit_exceeded","message":"slow down"}}"#, status: 429, headers: [.init(name: "Retry-After", value: String(seconds))])
    }

    private static var reply: ScriptedReply {
        var script = ResponsesScript()
        script.created("resp_1")
        script.messageDone("msg_1", "Done.", index: 0, phase: "final_answer")
        script.completed("resp_1")
        return .sse(script.events)
    }

    private func runtime(_ server: LoopbackHTTPServer, clock: ManualClock, budget: TimeInterval, log: InMemoryAgentLogSink) throws -> AgentRuntime {
        var configuration = CodexResponsesBackendConfiguration()
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 3, initialDelay: .zero, maximumDelay: .zero, jitter: 0)
        let backend = try H.backend(server, configuration: configuration, clock: clock, logSink: log)
        return try AgentRuntime(configuration: .init(
            backend: backend, stateStore: InMemoryRuntimeStateStore(), turnLimits: AgentTurnLimits(maximumDuration: budget), logSink: log, clock: clock
        ))
    }

    /// Runs the turn; if anything sleeps on `clock` besides the budget, records it and moves time on
    /// by `wait` so the turn can end (the behaviour this suite forbids when the wait does not fit).
    private func run(_ runtime: AgentRuntime, clock: ManualClock, wait: Duration) async throws -> (events: [AgentEvent], error: (any Error)?, slept: Bool) {
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "Hi"), in: thread.id)
        let slept = Counter()
        let watcher = Task {
            await clock.waitForSleepers(count: 2)
            guard !Task.isCancelled else { return }
            slept.increment()
            clock.advance(by: wait)
        }
        let (events, error) = await collect(stream)
        watcher.cancel()
        await watcher.value
        return (events, error, slept.count > 0)
    }

    @Test func aRetryAfterLongerThanTheTurnHasLeftFailsAtOnceWithTheWait() async throws {
        let server = try LoopbackHTTPServer(replies: [Self.rateLimited(retryAfter: 300), Self.reply])
        defer { server.shutdown() }
        let clock = ManualClock()
        let log = InMemoryAgentLogSink()
        let (events, error, slept) = try await run(try runtime(server, clock: clock, budget: 60, log: log), clock: clock, wait: .seconds(300))
        #expect(!slept, "the runtime waited for a Retry-After the turn could not afford")
        let failure = try #require(error as? AgentRuntimeError)
        #expect(failure.code == .rateLimited)
        #expect(failure.http?.statusCode == 429)
        #expect(failure.http?.retryAfter == 300)
        #expect(failure.executionLimit == nil)
        #expect(events.map(name).filter { $0 != "progress" } == ["turnStarted", "turnFailed(rate_limited)"])
        #expect(server.requests.count == 1)
        #expect(log.events.filter { $0.name == "retry.scheduled" }.isEmpty)
    }

    @Test func aRetryAfterThatFitsTheBudgetIsWaitedOutAndTheTurnCompletes() async throws {
        let server = try LoopbackHTTPServer(replies: [Self.rateLimited(retryAfter: 30), Self.reply])
        defer { server.shutdown() }
        let clock = ManualClock()
        let log = InMemoryAgentLogSink()
        let (events, error, slept) = try await run(try runtime(server, clock: clock, budget: 60, log: log), clock: clock, wait: .seconds(30))
        #expect(slept)
        #expect(error == nil)
        #expect(events.map(name).filter { $0 != "progress" } == ["turnStarted", "committed(assistant: Done.)", "turnCompleted"])
        #expect(server.requests.count == 2)
        #expect(log.events.filter { $0.name == "retry.scheduled" }.map { $0.metadata["delay_ms"] } == ["30000"])
    }

    @Test func aReadinessRetryTheTurnCannotAffordFailsAtOnce() async throws {
        let clock = ManualClock()
        let limited = AgentRuntimeError(code: .rateLimited, message: "slow down", http: .init(statusCode: 429, retryAfter: 120))
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.complete()], readinessFailure: limited), .reply("Late.")])
        let runtime = try AgentRuntime(configuration: .init(
            backend: backend, stateStore: InMemoryRuntimeStateStore(), turnLimits: AgentTurnLimits(maximumDuration: 90), clock: clock,
            readinessRetryPolicy: RetryPolicy(maximumAttempts: 3, initialDelay: .zero, maximumDelay: .zero, jitter: 0)
        ))
        let (events, error, slept) = try await run(runtime, clock: clock, wait: .seconds(120))
        #expect(!slept)
        let failure = try #require(error as? AgentRuntimeError)
        #expect(failure.code == .rateLimited)
        #expect(failure.http?.retryAfter == 120)
        #expect(failure.retry?.isRetryable == true)
        #expect(events.map(name) == ["turnStarted", "turnFailed(rate_limited)"])
        #expect(backend.requests.count == 1)
    }
}
