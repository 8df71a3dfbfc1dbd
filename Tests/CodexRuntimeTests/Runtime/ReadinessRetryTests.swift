@testable import CodexRuntime
import CodexCore
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// A turn whose first request a backend could not get accepted is started again under the runtime's
/// readiness retry policy, once per policy attempt, never on top of a lower layer's retries.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct ReadinessRetryTests {
    private typealias H = BackendHarness
    private static let noBudget = AgentTurnLimits(maximumToolCalls: 128, maximumDuration: nil)

    private func runtime(
        _ backend: any AgentBackend, store: any RuntimeStateStore = InMemoryRuntimeStateStore(), clock: any Clock<Duration> = ContinuousClock(),
        policy: RetryPolicy = RetryPolicy(maximumAttempts: 3, initialDelay: .zero, maximumDelay: .zero, jitter: 0), log: InMemoryAgentLogSink = InMemoryAgentLogSink()
    ) throws -> AgentRuntime {
        try AgentRuntime(configuration: .init(
            backend: backend, stateStore: store, turnLimits: Self.noBudget, logSink: log, clock: clock, readinessRetryPolicy: policy
        ))
    }

    private static let dropped = AgentRuntimeError(code: .transportFailure, message: "connection reset")

    @Test func aRetryableReadinessFailureStartsTheTurnAgainAfterTheBackoffOnTheRuntimesClock() async throws {
        let clock = ManualClock()
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.complete()], readinessFailure: Self.dropped), .reply("Second time lucky.", deltaLength: 100)])
        let store = InMemoryRuntimeStateStore()
        let log = InMemoryAgentLogSink()
        let runtime = try runtime(
            backend, store: store, clock: clock, policy: RetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(500), jitter: 0), log: log
        )
        let thread = try await runtime.createThread()
        let execution = try await runtime.start(Request(text: "Hello"), in: thread.id)
        let ready = Task { try await execution.waitUntilReady() }
        let (events, error) = await withTaskCancellationHandler {
            await clock.waitForSleepers(count: 1)
            #expect(backend.requests.count == 1, "no second attempt before the backoff elapsed")
            clock.advance(by: .milliseconds(499))
            #expect(clock.sleeperCount == 1, "the backoff is still sleeping")
            #expect(backend.requests.count == 1)
            clock.advance(by: .milliseconds(1))
            return await collect(execution.events)
        } onCancel: { ready.cancel() }
        try await ready.value
        #expect(error == nil)
        #expect(events.map(name) == [
            "turnStarted", "delta(Second time lucky.)", "committed(assistant: Second time lucky.)", "turnCompleted",
        ])
        #expect(backend.requests.count == 2)
        #expect(backend.requests.map(\.turnID) == [execution.id, execution.id])
        #expect(backend.interruptions == 1, "the failed attempt was told to release its work")
        #expect(describe(try await history(store, thread.id)) == [
            "event turn_started", "user: Hello", "assistant: Second time lucky.", "event turn_completed",
        ])
        let retries = log.events.filter { $0.name == "retry.scheduled" }
        #expect(retries.map { $0.metadata["delay_ms"] } == ["500"])
        #expect(retries.map { $0.metadata["error_code"] } == ["transport_failure"])
    }

    @Test func retriesStopAtThePolicysAttemptsAndTheFailureSaysSo() async throws {
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.complete()], readinessFailure: Self.dropped)])
        let store = InMemoryRuntimeStateStore()
        let runtime = try runtime(backend, store: store)
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "Hello"), in: thread.id))
        let failure = try #require(error as? AgentRuntimeError)
        #expect(failure.code == .transportFailure)
        #expect(failure.retry == .init(attempt: 3, maximumAttempts: 3, isRetryable: true, safety: .beforeOutput))
        #expect(events.map(name) == ["turnStarted", "turnFailed(transport_failure)"])
        #expect(backend.requests.count == 3)
        #expect(try await store.latestTurn(of: thread.id)?.status == .failed)
    }

    @Test func aCustomBackendsRetryableStatusIsRetried() async throws {
        let busy = AgentRuntimeError(code: .providerOverloaded, message: "busy", http: .init(statusCode: 503))
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.complete()], readinessFailure: busy), .reply("ok", deltaLength: 100)])
        let runtime = try runtime(backend)
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "Hello"), in: thread.id))
        #expect(error == nil)
        #expect(events.map(name).last == "turnCompleted")
        #expect(backend.requests.count == 2)
    }

    @Test func cancellingDuringTheBackoffInterruptsTheTurnWithoutAnotherAttempt() async throws {
        let clock = ManualClock()
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.complete()], readinessFailure: Self.dropped)])
        let store = InMemoryRuntimeStateStore()
        let runtime = try runtime(backend, store: store, clock: clock, policy: RetryPolicy(maximumAttempts: 3, initialDelay: .seconds(1), jitter: 0))
        let thread = try await runtime.createThread()
        let execution = try await runtime.start(Request(text: "Hello"), in: thread.id)
        let (events, error) = await withTaskCancellationHandler {
            await clock.waitForSleepers(count: 1)
            execution.cancel()
            return await collect(execution.events)
        } onCancel: { execution.cancel() }
        #expect(error is CancellationError)
        #expect(events.map(name).last == "turnInterrupted(interrupted_by_host)")
        #expect(backend.requests.count == 1)
        #expect(try await store.latestTurn(of: thread.id)?.status == .interrupted)
    }

    @Test(arguments: [
        AgentRuntimeError(code: .unauthorized, message: "sign in"),
        AgentRuntimeError(code: .quotaExceeded, message: "quota", http: .init(statusCode: 429)),
        AgentRuntimeError(code: .invalidRequest, message: "bad", http: .init(statusCode: 400)),
        AgentRuntimeError(code: .transportFailure, message: "already retried", retry: .init(attempt: 3, maximumAttempts: 3, isRetryable: true, safety: .beforeOutput)),
    ])
    func failuresThatAreNotRetryableOrWereRetriedBelowAreNotRetried(_ failure: AgentRuntimeError) async throws {
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.complete()], readinessFailure: failure), .reply("never")])
        let runtime = try runtime(backend)
        let thread = try await runtime.createThread()
        let (_, error) = await collect(try await runtime.stream(Request(text: "Hello"), in: thread.id))
        #expect((error as? AgentRuntimeError) == failure)
        #expect(backend.requests.count == 1)
    }

    @Test func aSteerSentWhileTheFirstAttemptIsRetriedIsTakenByTheAttemptThatRuns() async throws {
        let clock = ManualClock()
        let backend = FixtureAgentBackend(turns: [
            FixtureAgentBackend.Turn([.complete()], readinessFailure: Self.dropped, acceptsSteering: true),
            FixtureAgentBackend.Turn([.consumeSteering, .event(.assistantMessageDelta("Noted.")), .complete()], acceptsSteering: true),
        ])
        let store = InMemoryRuntimeStateStore()
        let runtime = try runtime(backend, store: store, clock: clock, policy: RetryPolicy(maximumAttempts: 2, initialDelay: .seconds(1), jitter: 0))
        let thread = try await runtime.createThread()
        let execution = try await runtime.start(Request(text: "Hello"), in: thread.id)
        let steer = Task { try await execution.steer("Be brief.") }
        let (events, error) = await withTaskCancellationHandler {
            await clock.waitForSleepers(count: 1)
            await eventually("the steer waits for an accepted attempt") { runtime.activeTurns.steeringWaiterCount(in: thread.id) == 1 }
            clock.advance(by: .seconds(1))
            return await collect(execution.events)
        } onCancel: { steer.cancel() }
        try await steer.value
        #expect(error == nil)
        #expect(backend.acceptedSteers == ["Be brief."])
        #expect(events.map(name).last == "turnCompleted")
        #expect(describe(try await history(store, thread.id)) == [
            "event turn_started", "user: Hello", "user: Be brief.", "assistant: Noted.", "event turn_completed",
        ])
    }

    @Test func theBuiltInBackendsTransportRetriesAreNotMultipliedByTheRuntime() async throws {
        let server = try LoopbackHTTPServer(replies: Array(repeating: .json(#"{"error":{"message":"busy"}}"#, status: 503), count: 9))
        defer { server.shutdown() }
        let runtime = try runtime(try H.backend(server))
        let thread = try await runtime.createThread()
        let (_, error) = await collect(try await runtime.stream(Request(text: "Hello"), in: thread.id))
        let failure = try #require(error as? AgentRuntimeError)
        #expect(failure.http?.statusCode == 503)
        #expect(failure.retry?.attempt == 3)
        #expect(server.requests.count == 3, "three transport attempts, none added by the runtime")
    }
}
