import CodexCore
import Synchronization

/// The four timeouts of one exchange (``HTTPTimeouts``) as a pure state machine over elapsed time on
/// the client's clock: which phase the exchange is in, when it last made progress, and which deadline
/// is nearest. Both HTTP clients drive one through a ``TransferWatchdog``.
///
/// - connect: while the request (with its body) is being sent;
/// - first byte: until the final response head arrives;
/// - idle: the longest gap between body chunks — stopped while the *consumer* is behind (a paused
///   transfer is not a silent server);
/// - total: from the start, whatever the phase.
struct TransferDeadlines: Sendable {
    enum Phase: Sendable, Equatable { case sending, awaitingHeaders, streaming, finished }

    enum Kind: String, Sendable {
        case connect
        case firstByte = "first byte"
        case idle
        case total
    }

    let timeouts: HTTPTimeouts
    private(set) var phase: Phase
    private(set) var lastActivity: Duration = .zero
    private(set) var paused = false
    private(set) var fired: Kind?

    init(timeouts: HTTPTimeouts, hasBody: Bool) {
        self.timeouts = timeouts
        phase = hasBody ? .sending : .awaitingHeaders
    }

    /// The request body has been handed over completely.
    mutating func bodySent(at now: Duration) {
        if phase == .sending { phase = .awaitingHeaders }
        lastActivity = now
    }

    /// The final response head arrived.
    mutating func headersReceived(at now: Duration) {
        guard phase != .finished else { return }
        phase = .streaming
        lastActivity = now
    }

    /// Bytes moved.
    mutating func activity(at now: Duration) {
        lastActivity = now
    }

    /// The consumer is behind and the transfer is paused: the idle clock stops.
    mutating func pause() {
        paused = true
    }

    /// The transfer runs again: the idle clock restarts now.
    mutating func resume(at now: Duration) {
        paused = false
        lastActivity = now
    }

    /// The exchange ended (normally, by failure or by cancellation): nothing fires any more.
    mutating func finish() {
        phase = .finished
    }

    /// The nearest deadline and what fires there; `nil` when none applies (finished).
    func nearest() -> (at: Duration, kind: Kind)? {
        guard phase != .finished, fired == nil else { return nil }
        // Without an array: this runs on every chunk, through the watchdog's update.
        var best: (at: Duration, kind: Kind)?
        func consider(_ at: Duration, _ kind: Kind) {
            if best.map({ at < $0.at }) ?? true { best = (at, kind) }
        }
        if phase == .sending { consider(timeouts.connect, .connect) }
        if phase == .sending || phase == .awaitingHeaders { consider(timeouts.firstByte, .firstByte) }
        if phase == .streaming, !paused { consider(lastActivity + timeouts.idle, .idle) }
        if let total = timeouts.total { consider(total, .total) }
        return best
    }

    /// Fires the timeout that has passed at `now`, once.
    mutating func expire(at now: Duration) -> Kind? {
        guard let nearest = nearest(), now >= nearest.at else { return nil }
        fired = nearest.kind
        return nearest.kind
    }

    /// The error a fired timeout ends the exchange with.
    func error(for kind: Kind) -> AgentRuntimeError {
        let limit: Duration = switch kind {
        case .connect: timeouts.connect
        case .firstByte: timeouts.firstByte
        case .idle: timeouts.idle
        case .total: timeouts.total ?? .zero
        }
        return AgentRuntimeError(.timeout(kind: kind.rawValue, limit: limit))
    }
}

/// Enforces a ``TransferDeadlines`` on an injected clock: sleeps until the nearest deadline, and calls
/// `onExpire` once with the timeout that passed and its error.
///
/// It never polls. Progress only moves a deadline later (an idle deadline after a chunk), so the sleep
/// armed for the old deadline wakes early, finds nothing due, and arms again. A change that moves the
/// nearest deadline *earlier* than the armed one (headers that start an idle deadline shorter than the
/// first-byte one, a resume after a pause) wakes the sleep at once through ``update(_:)``. Finishing
/// the exchange wakes it too, and the watchdog ends.
final class TransferWatchdog: Sendable {
    private struct State {
        var deadlines: TransferDeadlines
        /// The deadline the current sleep ends at (`nil`: none armed, or sleeping with no deadline).
        var armedAt: Duration?
        /// Whether a sleep is armed or in progress.
        var sleeping = false
        /// A wake arrived before the sleep parked: the sleep ends at once.
        var wakeRequested = false
        /// Ends the parked sleep early (a deadline moved earlier, the deadline passed, the exchange
        /// finished, or the task was cancelled).
        var wake: CheckedContinuation<Void, Never>?

        /// Ends the sleep: resumes it when parked, else marks it to end as it parks.
        mutating func takeWake() -> CheckedContinuation<Void, Never>? {
            guard sleeping else { return nil }
            guard let wake else {
                wakeRequested = true
                return nil
            }
            self.wake = nil
            return wake
        }
    }

    private let state: Mutex<State>
    private let timer: ElapsedTimer

    init(timeouts: HTTPTimeouts, hasBody: Bool, timer: ElapsedTimer) {
        state = Mutex(State(deadlines: TransferDeadlines(timeouts: timeouts, hasBody: hasBody)))
        self.timer = timer
    }

    /// Elapsed time on the client's clock since the exchange started.
    var now: Duration { timer.elapsed() }

    /// Applies `change` at the current elapsed time, and wakes the watchdog when the nearest deadline
    /// is now earlier than the one it sleeps until (or the exchange finished).
    func update(_ change: (inout TransferDeadlines, Duration) -> Void) {
        let now = timer.elapsed()
        let wake = state.withLock { state -> CheckedContinuation<Void, Never>? in
            change(&state.deadlines, now)
            guard state.sleeping else { return nil }
            let earlier = switch (state.deadlines.nearest()?.at, state.armedAt) {
            case (let next?, let armed?): next < armed
            case (.some, nil): true
            case (nil, _): state.deadlines.phase == .finished
            }
            return earlier ? state.takeWake() : nil
        }
        wake?.resume()
    }

    /// Runs until the exchange finishes or a timeout fires (then `onExpire` gets its error), or the
    /// task is cancelled.
    func run(onExpire: (TransferDeadlines.Kind, AgentRuntimeError) -> Void) async {
        while !Task.isCancelled {
            let now = timer.elapsed()
            let (next, expired, error, finished) = state.withLock { state -> (Duration?, TransferDeadlines.Kind?, AgentRuntimeError?, Bool) in
                let kind = state.deadlines.expire(at: now)
                let next = state.deadlines.nearest()?.at
                let finished = state.deadlines.phase == .finished
                state.armedAt = next
                state.sleeping = kind == nil && !finished
                state.wakeRequested = false
                return (next, kind, kind.map(state.deadlines.error(for:)), finished)
            }
            if let expired, let error {
                onExpire(expired, error)
                return
            }
            if finished { return }
            await sleep(until: next)
        }
    }

    /// Sleeps until `deadline` on the client's clock (with no deadline, until woken), or until
    /// ``update(_:)`` or the task's cancellation wakes it. One child task per sleep: the clock's wait.
    private func sleep(until deadline: Duration?) async {
        let timer = self.timer
        await withTaskGroup(of: Void.self) { group in
            if let deadline {
                group.addTask {
                    try? await timer.sleepUntil(deadline)
                    self.wakeUp()
                }
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { state -> Bool in
                        guard state.sleeping, !state.wakeRequested else { return true }
                        state.wake = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                self.wakeUp()
            }
            group.cancelAll()
        }
        state.withLock { state in
            state.sleeping = false
            state.wakeRequested = false
            state.wake = nil
        }
    }

    private func wakeUp() {
        state.withLock { $0.takeWake() }?.resume()
    }
}
