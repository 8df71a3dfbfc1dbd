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

/// One exchange's ``TransferDeadlines``, enforced by its client's ``DeadlineScheduler``: the clients
/// report progress through ``update(_:)``, and the scheduler calls the `onExpire` given to
/// ``start(onExpire:)`` once, with the timeout that passed and its error.
///
/// The scheduler is told only when a deadline moves *earlier* than this exchange's previous one
/// (headers that start an idle deadline shorter than the first-byte one, a resume after a pause): most
/// progress moves deadlines later, which the scheduler finds when it wakes. Finishing the exchange takes
/// it off the scheduler.
final class TransferWatchdog: Sendable {
    /// What the scheduler finds when it looks at an exchange.
    enum Check {
        /// A timeout passed: the exchange is over, `onExpire` gets this.
        case expired(TransferDeadlines.Kind, AgentRuntimeError, @Sendable (TransferDeadlines.Kind, AgentRuntimeError) -> Void)
        /// The next deadline, on the scheduler's elapsed time.
        case next(Duration)
        /// No deadline runs now (the transfer is paused and there is no total timeout).
        case none
        /// Nothing can fire any more (the exchange finished or a timeout fired).
        case done
    }

    private struct State {
        var deadlines: TransferDeadlines
        /// Set by ``start(onExpire:)``; dropped once the exchange finishes or a timeout fires.
        var onExpire: (@Sendable (TransferDeadlines.Kind, AgentRuntimeError) -> Void)?
        var watched = false
    }

    private let state: Mutex<State>
    private let scheduler: DeadlineScheduler
    /// The scheduler's elapsed time when the exchange started: the exchange's own times are relative to it.
    private let start: Duration

    init(timeouts: HTTPTimeouts, hasBody: Bool, scheduler: DeadlineScheduler) {
        state = Mutex(State(deadlines: TransferDeadlines(timeouts: timeouts, hasBody: hasBody)))
        self.scheduler = scheduler
        start = scheduler.now
    }

    /// Elapsed time on the client's clock since the exchange started.
    var now: Duration { scheduler.now - start }

    /// Hands the exchange to the scheduler; `onExpire` is called once if a timeout passes.
    func start(onExpire: @escaping @Sendable (TransferDeadlines.Kind, AgentRuntimeError) -> Void) {
        let next = state.withLock { state -> Duration? in
            guard state.deadlines.phase != .finished else { return nil }
            state.onExpire = onExpire
            state.watched = true
            return state.deadlines.nearest()?.at
        }
        guard let next else { return }
        scheduler.watch(self, next: start + next)
    }

    /// Applies `change` at the current elapsed time; tells the scheduler when the nearest deadline is
    /// now earlier than before, or that the exchange finished.
    func update(_ change: (inout TransferDeadlines, Duration) -> Void) {
        let now = self.now
        let (earlier, finished) = state.withLock { state -> (Duration?, Bool) in
            let before = state.deadlines.nearest()?.at
            change(&state.deadlines, now)
            guard state.watched else { return (nil, false) }
            if state.deadlines.phase == .finished {
                state.watched = false
                state.onExpire = nil
                return (nil, true)
            }
            let after = state.deadlines.nearest()?.at
            let earlier: Duration? = switch (after, before) {
            case (let after?, let before?): after < before ? after : nil
            case (let after?, nil): after
            case (nil, _): nil
            }
            return (earlier, false)
        }
        if finished {
            scheduler.forget(self)
        } else if let earlier {
            scheduler.deadlineMovedEarlier(to: start + earlier)
        }
    }

    /// For the scheduler: fires the timeout that has passed at `schedulerNow` (on its elapsed time),
    /// or says when the next one is due.
    func check(at schedulerNow: Duration) -> Check {
        state.withLock { state -> Check in
            guard state.watched else { return .done }
            if let kind = state.deadlines.expire(at: schedulerNow - start), let onExpire = state.onExpire {
                state.watched = false
                state.onExpire = nil
                return .expired(kind, state.deadlines.error(for: kind), onExpire)
            }
            guard let next = state.deadlines.nearest()?.at else { return .none }
            return .next(start + next)
        }
    }
}
