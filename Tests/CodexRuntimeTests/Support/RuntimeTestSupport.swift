import CodexCore
import CodexRuntime
import CodexSchema
import CodexTestSupport
import Foundation
import Synchronization
import Testing

/// Builds a runtime over a fixture backend and an in-memory store.
func makeRuntime(
    _ backend: FixtureAgentBackend, store: any RuntimeStateStore = InMemoryRuntimeStateStore(), limits: AgentTurnLimits = .default,
    bufferedEvents: Int = 64, tools: [AgentTool] = [], persona: AgentPersonaStack? = nil, skills: [AgentSkill] = [],
    approvalPresenter: (any AgentApprovalPresenting)? = nil
) throws -> AgentRuntime {
    try AgentRuntime(configuration: .init(
        backend: backend, approvalPresenter: approvalPresenter, stateStore: store, maximumBufferedEvents: bufferedEvents,
        turnLimits: limits, persona: persona, tools: tools, skills: skills
    ))
}

/// Reads a stream to its end: the events and the error it ended with, if any.
func collect(_ stream: AgentEventStream<AgentEvent>) async -> (events: [AgentEvent], error: (any Error)?) {
    var events: [AgentEvent] = []
    do {
        for try await event in stream { events.append(event) }
        return (events, nil)
    } catch {
        return (events, error)
    }
}

/// Starts a task reading `stream` and returns it once the first text delta arrived (for tests that
/// then cancel the consumer).
func consumerAfterFirstDelta(_ stream: AgentEventStream<AgentEvent>) async -> Task<Void, any Error> {
    let seen = Counter()
    let consumer = Task {
        for try await event in stream { if case .assistantMessageDelta = event { seen.increment() } }
    }
    await eventually("the first delta arrived") { seen.count >= 1 }
    return consumer
}

/// The whole history of a thread.
func history(_ store: any RuntimeStateStore, _ thread: AgentThreadID) async throws -> [AgentHistoryItem] {
    try await store.history(of: thread, query: AgentHistoryQuery(limit: 10_000)).items
}

/// A compact description of history items for exact comparisons.
func describe(_ items: [AgentHistoryItem]) -> [String] {
    items.map { item in
        switch item {
        case .message(let message): return "\(message.role.rawValue): \(message.text)"
        case .toolCall(let call): return "call \(call.toolName)#\(call.id.rawValue)"
        case .toolResult(let result): return "result \(result.toolName)#\(result.invocationID.rawValue) \(result.status.rawValue)"
        case .reasoning(let reasoning): return "reasoning \(reasoning.itemID)"
        case .systemEvent(let event): return "event \(event.type.rawValue)\(event.errorCode.map { " \($0)" } ?? "")"
        case .contextCompaction(let compaction): return "compaction \(compaction.strategy.rawValue) \(compaction.replacedItemCount)"
        }
    }
}

/// A compact name for an event.
func name(_ event: AgentEvent) -> String {
    switch event {
    case .turnStarted: return "turnStarted"
    case .assistantMessageDelta(_, _, let text): return "delta(\(text))"
    case .messageCommitted(let message): return "committed(\(message.role.rawValue): \(message.text))"
    case .turnCompleted: return "turnCompleted"
    case .turnFailed(let error): return "turnFailed(\(error.code.rawValue))"
    case .turnInterrupted(let interruption): return "turnInterrupted(\(interruption.reason))"
    case .toolCallStarted(let call): return "toolStarted(\(call.id.rawValue))"
    case .toolCallFinished(let result): return "toolFinished(\(result.invocationID.rawValue) \(result.status.rawValue))"
    case .structuredOutputPartial: return "partial"
    case .structuredOutputCommitted: return "structuredCommitted"
    case .approvalRequested: return "approvalRequested"
    case .approvalResolved(let resolution): return "approvalResolved(\(resolution.decision.rawValue))"
    case .progress: return "progress"
    case .rateLimitsUpdated: return "rateLimits"
    default: return "other"
    }
}

/// Polls `condition` until it holds (bounded; records an issue when it never does).
func eventually(_ what: Comment, timeout: Duration = .hangGuard, _ condition: @Sendable () async throws -> Bool) async rethrows {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try? await Task.sleep(for: .milliseconds(5))
    }
    Issue.record(what)
}

/// A store that fails its first `failures` history appends with a transient error (a locked database).
final class FlakyStateStore: ForwardingStateStore {
    struct Locked: TransientStoreError { var isTransient: Bool { true } }
    let base: any RuntimeStateStore = InMemoryRuntimeStateStore()
    private let remaining: Mutex<Int>
    init(failures: Int) { remaining = Mutex(failures) }
    var failuresLeft: Int { remaining.withLock { $0 } }

    func appendHistory(_ items: [AgentHistoryItem], to thread: AgentThreadID) async throws {
        let fail = remaining.withLock { left -> Bool in
            guard left > 0 else { return false }
            left -= 1
            return true
        }
        if fail { throw Locked() }
        try await base.appendHistory(items, to: thread)
    }
}

/// A state store whose history writes wait at a gate: stands in for a store blocked on a disk lock.
final class GatedStateStore: ForwardingStateStore {
    let base: any RuntimeStateStore = InMemoryRuntimeStateStore()
    private let gate = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>], blocked: Int, appends: Int, closeAt: Int?)>((true, [], 0, 0, nil))

    func close() { gate.withLock { $0.open = false } }
    /// Closes the gate when the `n`-th history append (counting from 1) arrives.
    func close(atAppend n: Int) { gate.withLock { $0.closeAt = n } }
    func open() {
        let waiters = gate.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
    var blockedWrites: Int { gate.withLock { $0.blocked } }
    var isOpen: Bool { gate.withLock { $0.open } }

    private func pass() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let open = gate.withLock { state -> Bool in
                state.appends += 1
                if let closeAt = state.closeAt, state.appends >= closeAt { state.open = false; state.closeAt = nil }
                if state.open { return true }
                state.blocked += 1
                state.waiters.append(continuation)
                return false
            }
            if open { continuation.resume() }
        }
    }

    func appendHistory(_ items: [AgentHistoryItem], to thread: AgentThreadID) async throws {
        await pass()
        try await base.appendHistory(items, to: thread)
    }
}

/// A tool call for fixtures.
func call(_ id: String, _ tool: String = "lookup", arguments: String = "{}") -> ToolInvocation {
    ToolInvocation(id: ToolInvocationID(rawValue: id), toolName: tool, arguments: arguments)
}

/// Counts executor runs.
final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

/// A parallel-safe tool named `slow` that never finishes by itself: each call yields on `started`, then
/// waits until it is cancelled, which it counts in `cancelled`.
func slowTool(started: AsyncStream<Void>.Continuation, cancelled: Counter) -> AgentTool {
    AgentTool(definition: ToolDefinition(name: "slow", description: "Slow.", inputSchema: ["type": "object"], supportsParallelExecution: true)) { invocation in
        started.yield()
        do {
            try await Task.sleep(for: .seconds(86_400))
        } catch {
            cancelled.increment()
            throw error
        }
        return .success(invocation, text: "never")
    }
}

/// A state store that passes every call to `base`: a test's decorator conforms and writes only the calls
/// it changes. (`recordTurn` is not forwarded, so a decorator of `appendHistory` sees the turn's history
/// too; a decorator that keeps `base`'s own atomic `recordTurn` forwards it itself.)
protocol ForwardingStateStore: RuntimeStateStore {
    /// The store that does the work.
    var base: any RuntimeStateStore { get }
}

extension ForwardingStateStore {
    func threads() async throws -> [AgentThread] { try await base.threads() }
    func thread(_ id: AgentThreadID) async throws -> AgentThread? { try await base.thread(id) }
    func upsertThread(_ thread: AgentThread) async throws { try await base.upsertThread(thread) }
    func deleteThread(_ id: AgentThreadID) async throws { try await base.deleteThread(id) }
    func appendHistory(_ items: [AgentHistoryItem], to thread: AgentThreadID) async throws { try await base.appendHistory(items, to: thread) }
    func history(of thread: AgentThreadID, query: AgentHistoryQuery) async throws -> AgentHistoryPage { try await base.history(of: thread, query: query) }
    func upsertTurn(_ turn: AgentTurn) async throws { try await base.upsertTurn(turn) }
    func latestTurn(of thread: AgentThreadID) async throws -> AgentTurn? { try await base.latestTurn(of: thread) }
}
