import CodexCore
import Synchronization

/// Enforces the timeouts of every exchange of one HTTP client with one task on the client's clock,
/// instead of a task (and a timer) per exchange.
///
/// The task sleeps until the nearest deadline of the exchanges it watches, then fires what is due
/// and sleeps again. It never polls: an exchange's progress only moves its deadline later, so a sleep
/// armed for an old deadline wakes early, finds nothing due, and arms again. An exchange whose
/// deadline moves *earlier* than the armed one (``deadlineMovedEarlier(to:)``), or a new exchange due
/// sooner (``watch(_:next:)``), wakes the sleep at once. A finished exchange is just forgotten.
///
/// The task starts with the first exchange and ends when it wakes (at the deadline it slept for) and
/// finds none left to watch; the next exchange starts another. So an idle client's task ends within
/// one timeout of its last exchange, a finished exchange costs no wake-up, and exchanges that outlive
/// their client are still timed.
final class DeadlineScheduler: Sendable {
    private struct State {
        var watched: [ObjectIdentifier: TransferWatchdog] = [:]
        /// Whether the task runs.
        var running = false
        /// The deadline the current sleep ends at (`nil`: sleeping with no deadline).
        var armedAt: Duration?
        /// Whether the task is asleep or about to park (a wake then ends the sleep).
        var sleeping = false
        /// A wake arrived before the sleep parked: the sleep ends at once.
        var wakeRequested = false
        /// A deadline moved earlier or an exchange arrived while the task was looking: look again.
        var changed = false
        /// Ends the parked sleep early.
        var wake: CheckedContinuation<Void, Never>?

        /// Ends the sleep when `deadline` is before the armed one (or always, for `nil`).
        mutating func wakeIfBefore(_ deadline: Duration?) -> CheckedContinuation<Void, Never>? {
            changed = true
            guard sleeping else { return nil }
            if let deadline, let armedAt, deadline >= armedAt { return nil }
            guard let wake else {
                wakeRequested = true
                return nil
            }
            self.wake = nil
            return wake
        }
    }

    private let state = Mutex(State())
    private let timer: ElapsedTimer

    /// A scheduler on `timer` (the client's clock).
    init(timer: ElapsedTimer) {
        self.timer = timer
    }

    /// Elapsed time on the client's clock since the scheduler was made.
    var now: Duration { timer.elapsed() }

    /// Starts watching an exchange whose nearest deadline is `next` (on ``now``'s scale).
    func watch(_ watchdog: TransferWatchdog, next: Duration) {
        let wake = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.watched[ObjectIdentifier(watchdog)] = watchdog
            if !state.running {
                state.running = true
                Task { [self] in await run() }
                return nil
            }
            return state.wakeIfBefore(next)
        }
        wake?.resume()
    }

    /// Stops watching a finished exchange. The sleep is not woken (a late wake finds nothing due)
    /// unless it has no deadline and nothing is left to watch: then the task ends.
    func forget(_ watchdog: TransferWatchdog) {
        let wake = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.watched.removeValue(forKey: ObjectIdentifier(watchdog))
            guard state.watched.isEmpty, state.armedAt == nil else { return nil }
            return state.wakeIfBefore(nil)
        }
        wake?.resume()
    }

    /// A watched exchange's nearest deadline is now `deadline`, earlier than before.
    func deadlineMovedEarlier(to deadline: Duration) {
        state.withLock { $0.wakeIfBefore(deadline) }?.resume()
    }

    /// The number of exchanges watched now, and whether the task runs.
    var load: (watched: Int, running: Bool) { state.withLock { ($0.watched.count, $0.running) } }

    private func run() async {
        while true {
            let watched = state.withLock { state -> [TransferWatchdog] in
                state.changed = false
                return Array(state.watched.values)
            }
            let now = timer.elapsed()
            var next: Duration?
            var ended: [ObjectIdentifier] = []
            var expired: [(TransferDeadlines.Kind, AgentRuntimeError, @Sendable (TransferDeadlines.Kind, AgentRuntimeError) -> Void)] = []
            for watchdog in watched {
                switch watchdog.check(at: now) {
                case .expired(let kind, let error, let onExpire):
                    expired.append((kind, error, onExpire))
                    ended.append(ObjectIdentifier(watchdog))
                case .next(let at):
                    next = min(next ?? at, at)
                case .none:
                    break
                case .done:
                    ended.append(ObjectIdentifier(watchdog))
                }
            }
            enum Step { case sleep, lookAgain, end }
            let step = state.withLock { state -> Step in
                for id in ended { state.watched.removeValue(forKey: id) }
                // Something changed while looking, or timeouts fired: look again before sleeping.
                guard !state.changed, expired.isEmpty else { return .lookAgain }
                if state.watched.isEmpty {
                    state.running = false
                    return .end
                }
                state.armedAt = next
                state.sleeping = true
                state.wakeRequested = false
                return .sleep
            }
            for (kind, error, onExpire) in expired { onExpire(kind, error) }
            switch step {
            case .sleep: await sleep(until: next)
            case .lookAgain: continue
            case .end: return
            }
        }
    }

    /// Sleeps until `deadline` (with none, until woken), or until a wake ends it. One child task per
    /// sleep: the clock's wait.
    private func sleep(until deadline: Duration?) async {
        let timer = self.timer
        await withTaskGroup(of: Void.self) { group in
            if let deadline {
                group.addTask {
                    try? await timer.sleepUntil(deadline)
                    self.wakeUp()
                }
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    guard state.sleeping, !state.wakeRequested else { return true }
                    state.wake = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            group.cancelAll()
        }
        state.withLock { state in
            state.sleeping = false
            state.wakeRequested = false
            state.wake = nil
            state.armedAt = nil
        }
    }

    private func wakeUp() {
        state.withLock { $0.wakeIfBefore(nil) }?.resume()
    }
}
