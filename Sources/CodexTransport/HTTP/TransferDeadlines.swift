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
        var deadlines: [(Duration, Kind)] = []
        if phase == .sending { deadlines.append((timeouts.connect, .connect)) }
        if phase == .sending || phase == .awaitingHeaders { deadlines.append((timeouts.firstByte, .firstByte)) }
        if phase == .streaming, !paused { deadlines.append((lastActivity + timeouts.idle, .idle)) }
        if let total = timeouts.total { deadlines.append((total, .total)) }
        return deadlines.min { $0.0 < $1.0 }.map { (at: $0.0, kind: $0.1) }
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
        return AgentRuntimeError(code: .timedOut, message: "the \(kind.rawValue) timeout of \(limit) passed")
    }
}

/// Enforces a ``TransferDeadlines`` on an injected clock: sleeps until the nearest deadline (waking at
/// least every quarter of the shortest timeout, at most every second, so phase changes are seen) and
/// calls `onExpire` once with the timeout that passed and its error.
final class TransferWatchdog: Sendable {
    let deadlines: Mutex<TransferDeadlines>
    private let timer: ElapsedTimer

    init(timeouts: HTTPTimeouts, hasBody: Bool, timer: ElapsedTimer) {
        deadlines = Mutex(TransferDeadlines(timeouts: timeouts, hasBody: hasBody))
        self.timer = timer
    }

    /// Elapsed time on the client's clock since the exchange started.
    var now: Duration { timer.elapsed() }

    /// Applies `change` at the current elapsed time.
    func update(_ change: (inout TransferDeadlines, Duration) -> Void) {
        let now = timer.elapsed()
        deadlines.withLock { change(&$0, now) }
    }

    /// Runs until the exchange finishes or a timeout fires (then `onExpire` gets its error).
    func run(onExpire: (TransferDeadlines.Kind, AgentRuntimeError) -> Void) async {
        let timeouts = deadlines.withLock { $0.timeouts }
        let shortest = [timeouts.connect, timeouts.firstByte, timeouts.idle, timeouts.total ?? timeouts.idle].min() ?? timeouts.idle
        let quantum = min(max(shortest / 4, .milliseconds(10)), .seconds(1))
        while !Task.isCancelled {
            let now = timer.elapsed()
            let (next, expired, error) = deadlines.withLock { state -> ((at: Duration, kind: TransferDeadlines.Kind)?, TransferDeadlines.Kind?, AgentRuntimeError?) in
                let kind = state.expire(at: now)
                return (state.nearest(), kind, kind.map(state.error(for:)))
            }
            if let expired, let error {
                onExpire(expired, error)
                return
            }
            guard let next else {
                // Finished, or paused with no other deadline: look again a quantum later.
                if deadlines.withLock({ $0.phase == .finished }) { return }
                do { try await timer.sleepUntil(now + quantum) } catch { return }
                continue
            }
            do { try await timer.sleepUntil(min(next.at, now + quantum)) } catch { return }
        }
    }
}
