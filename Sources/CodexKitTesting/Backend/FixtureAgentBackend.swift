public import CodexCore
import Foundation
import Synchronization

/// A backend that replays scripted turns, for host-app tests (and CodexKit's own).
///
/// ```swift
/// let backend = FixtureAgentBackend(turns: [
///     .reply("Hello there."),
///     .init([.event(.toolCallRequested(call)), .awaitToolResults, .event(.assistantMessageDelta("Done.")), .complete()]),
/// ])
/// let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore()))
/// ```
///
/// Each `startTurn` takes the next scripted turn (the last one repeats). Events are produced on demand
/// as the runtime reads them, so the fixture never buffers ahead; a turn whose steps run out without
/// ``Step/complete(usage:)`` ends like a stream cut short (`turn_summary_missing` in the runtime).
public final class FixtureAgentBackend: AgentBackend {
    /// One step of a scripted turn.
    public enum Step: Sendable {
        /// Emits an event.
        case event(AgentBackendEvent)
        /// Emits `turnCompleted` with the turn's IDs, the last completed assistant message and `usage`.
        case complete(usage: AgentUsage? = nil)
        /// Waits until a result was submitted for every tool call announced so far in the turn.
        case awaitToolResults
        /// Sleeps on the fixture's clock (cancellable).
        case sleep(Duration)
        /// Waits until the turn is cancelled.
        case hang
        /// Fails the event stream.
        case fail(AgentRuntimeError)
        /// Emits `userMessageAccepted` for the oldest steer the host queued, waiting for one (only in a
        /// turn that ``Turn/acceptsSteering``).
        case consumeSteering
    }

    /// A scripted turn.
    public struct Turn: Sendable {
        /// The steps, in order.
        public var steps: [Step]
        /// When set, `waitUntilReady` throws it (before any event).
        public var readinessFailure: AgentRuntimeError?
        /// Whether the turn takes steering input (queued until a ``Step/consumeSteering`` step, or consumed
        /// at ``Step/complete(usage:)``; refused with `turn_not_active` after it). Default `false`:
        /// `steering_unsupported`.
        public var acceptsSteering: Bool

        /// Creates a turn.
        public init(_ steps: [Step], readinessFailure: AgentRuntimeError? = nil, acceptsSteering: Bool = false) {
            self.steps = steps
            self.readinessFailure = readinessFailure
            self.acceptsSteering = acceptsSteering
        }

        /// A plain reply: the text as deltas of at most `deltaLength` characters, the completed
        /// message (phase `.finalAnswer`), then completion.
        public static func reply(_ text: String, deltaLength: Int = 16, usage: AgentUsage? = nil) -> Turn {
            var steps: [Step] = []
            var rest = Substring(text)
            while !rest.isEmpty {
                let piece = rest.prefix(max(1, deltaLength))
                steps.append(.event(.assistantMessageDelta(String(piece))))
                rest = rest.dropFirst(piece.count)
            }
            steps.append(.event(.assistantMessageCompleted(AgentMessage(threadID: AgentThreadID(rawValue: ""), role: .assistant, text: text, phase: .finalAnswer))))
            steps.append(.complete(usage: usage))
            return Turn(steps)
        }
    }

    private struct State {
        var turns: [Turn]
        var next = 0
        var requests: [AgentBackendTurnRequest] = []
        var submitted: [ToolResultEnvelope] = []
        var cancelledTurns = 0
        var steers: [String] = []
        var interruptions = 0
    }

    private let state: Mutex<State>
    /// The clock `.sleep` and `.hang` steps wait on.
    let clock: any Clock<Duration>

    /// Creates a fixture that plays `turns` in order (the last one repeats).
    /// - Parameters:
    ///   - turns: The scripted turns.
    ///   - clock: The clock `.sleep` and `.hang` steps wait on (a test passes a `ManualClock`).
    public init(turns: [Turn], clock: any Clock<Duration> = ContinuousClock()) {
        state = Mutex(State(turns: turns))
        self.clock = clock
    }

    /// The turn requests received, in order.
    public var requests: [AgentBackendTurnRequest] { state.withLock { $0.requests } }
    /// Every tool result submitted, in order.
    public var submittedResults: [ToolResultEnvelope] { state.withLock { $0.submitted } }
    /// How many turns saw their cancellation (their event production ended with `CancellationError`).
    public var cancelledTurns: Int { state.withLock { $0.cancelledTurns } }
    /// Every steer a turn accepted, in order.
    public var acceptedSteers: [String] { state.withLock { $0.steers } }
    /// How many times the runtime interrupted a turn explicitly (through the turn stream's `interrupt`).
    public var interruptions: Int { state.withLock { $0.interruptions } }

    /// Starts the next scripted turn.
    public func startTurn(_ request: AgentBackendTurnRequest) async throws -> AgentTurnStream {
        let turn = state.withLock { state -> Turn in
            state.requests.append(request)
            guard !state.turns.isEmpty else { return Turn([]) }
            let turn = state.turns[min(state.next, state.turns.count - 1)]
            state.next += 1
            return turn
        }
        let player = FixtureTurnPlayer(turn: turn, request: request, backend: self)
        return AgentTurnStream(
            events: AsyncThrowingStream(unfolding: { try await player.next() }),
            submitToolResult: { envelope in player.submit(envelope) },
            steer: turn.acceptsSteering ? { @Sendable text, images in try player.steer(text, images: images) } : nil,
            interrupt: { [weak self] in
                self?.state.withLock { $0.interruptions += 1 }
                player.closeSteering()
            },
            waitUntilReady: {
                if let failure = turn.readinessFailure { throw failure }
            }
        )
    }

    fileprivate func noteSubmitted(_ envelope: ToolResultEnvelope) {
        state.withLock { $0.submitted.append(envelope) }
    }

    fileprivate func noteCancelledTurn() {
        state.withLock { $0.cancelledTurns += 1 }
    }

    fileprivate func noteSteer(_ text: String) {
        state.withLock { $0.steers.append(text) }
    }
}

/// Plays one scripted turn on demand.
private final class FixtureTurnPlayer: Sendable {
    private struct State {
        var index = 0
        var announced: Set<ToolInvocationID> = []
        var submitted: Set<ToolInvocationID> = []
        var lastMessage: AgentMessage?
        var waiter: CheckedContinuation<Void, any Error>?
        var steering = SteeringQueueState()
        var steerWaiter: CheckedContinuation<Void, any Error>?
    }

    let turn: FixtureAgentBackend.Turn
    let request: AgentBackendTurnRequest
    let backend: FixtureAgentBackend
    private let state = Mutex(State())

    init(turn: FixtureAgentBackend.Turn, request: AgentBackendTurnRequest, backend: FixtureAgentBackend) {
        self.turn = turn
        self.request = request
        self.backend = backend
    }

    func submit(_ envelope: ToolResultEnvelope) {
        backend.noteSubmitted(envelope)
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.submitted.insert(envelope.invocationID)
            guard state.announced.isSubset(of: state.submitted) else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func steer(_ text: String, images: [AgentImageAttachment]) throws(AgentRuntimeError) {
        let waiter = try state.withLock { state throws(AgentRuntimeError) -> CheckedContinuation<Void, any Error>? in
            try state.steering.accept(.init(text: text, images: images))
            defer { state.steerWaiter = nil }
            return state.steerWaiter
        }
        backend.noteSteer(text)
        waiter?.resume()
    }

    func closeSteering() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            _ = state.steering.close()
            defer { state.steerWaiter = nil }
            return state.steerWaiter
        }
        waiter?.resume(throwing: CancellationError())
    }

    func next() async throws -> AgentBackendEvent? {
        do {
            return try await play()
        } catch is CancellationError {
            backend.noteCancelledTurn()
            throw CancellationError()
        }
    }

    private func play() async throws -> AgentBackendEvent? {
        while true {
            try Task.checkCancellation()
            let step: FixtureAgentBackend.Step? = state.withLock { state in
                guard state.index < turn.steps.count else { return nil }
                defer { state.index += 1 }
                return turn.steps[state.index]
            }
            guard let step else { return nil }
            switch step {
            case .event(let event):
                state.withLock { state in
                    switch event {
                    case .toolCallRequested(let call): state.announced.insert(call.id)
                    case .toolCallsRequested(let calls): state.announced.formUnion(calls.map(\.id))
                    case .assistantMessageCompleted(let message): state.lastMessage = message
                    default: break
                    }
                }
                return event
            case .complete(let usage):
                // Like the built-in backend, accepted steering is never dropped: each leftover steer is
                // consumed (userMessageAccepted) before the turn completes.
                let (leftover, last) = state.withLock { state -> (SteeringQueueState.Input?, AgentMessage?) in
                    if let input = state.steering.takeFirst() {
                        state.index -= 1  // this .complete step runs again after the steer
                        return (input, nil)
                    }
                    _ = state.steering.close()
                    return (nil, state.lastMessage)
                }
                if let leftover {
                    return .userMessageAccepted(AgentMessage(threadID: request.threadID, role: .user, text: leftover.text, images: leftover.images))
                }
                return .turnCompleted(AgentTurnSummary(turnID: request.turnID, threadID: request.threadID, finalMessage: last, usage: usage))
            case .awaitToolResults:
                try await waitForResults()
            case .sleep(let duration):
                try await backend.clock.sleep(for: duration)
            case .hang:
                try await backend.clock.sleep(for: .seconds(86_400 * 365))
            case .fail(let error):
                throw error
            case .consumeSteering:
                let input = try await nextSteer()
                return .userMessageAccepted(AgentMessage(threadID: request.threadID, role: .user, text: input.text, images: input.images))
            }
        }
    }

    private func nextSteer() async throws -> SteeringQueueState.Input {
        while true {
            if let input = state.withLock({ $0.steering.takeFirst() }) { return input }
            try await suspend(until: { !$0.steering.queued.isEmpty || $0.steering.isClosed }, as: .steering)
            if state.withLock({ $0.steering.isClosed && $0.steering.queued.isEmpty }) { throw CancellationError() }
        }
    }

    private func waitForResults() async throws {
        try await suspend(until: { $0.announced.isSubset(of: $0.submitted) }, as: .results)
    }

    /// What a suspended step waits for: each kind keeps its continuation in its own slot.
    private enum Wait: Sendable {
        case results
        case steering

        func take(_ state: inout State) -> CheckedContinuation<Void, any Error>? {
            switch self {
            case .results: defer { state.waiter = nil }; return state.waiter
            case .steering: defer { state.steerWaiter = nil }; return state.steerWaiter
            }
        }

        func keep(_ continuation: CheckedContinuation<Void, any Error>, in state: inout State) {
            switch self {
            case .results: state.waiter = continuation
            case .steering: state.steerWaiter = continuation
            }
        }
    }

    /// Suspends until `ready` holds (checked now, then whenever the continuation kept for `wait` is
    /// resumed) or the task is cancelled (`CancellationError`).
    private func suspend(until ready: @escaping @Sendable (State) -> Bool, as wait: Wait) async throws {
        // Already ready: no continuation, so the task is not enqueued again on its executor.
        if state.withLock({ ready($0) }) {
            try Task.checkCancellation()
            return
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let now = state.withLock { state -> Bool in
                    if ready(state) || Task.isCancelled { return true }
                    wait.keep(continuation, in: &state)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let pending = state.withLock { wait.take(&$0) }
            pending?.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }
}
