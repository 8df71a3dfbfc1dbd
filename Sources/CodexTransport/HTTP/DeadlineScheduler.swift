import CodexCore
import Synchronization

/// Enforces the timeouts of every exchange of one HTTP client with one task on the client's clock,
/// instead of a task (and a timer) per exchange.
///
/// The task sleeps until the nearest deadline of the exchanges it watches, then fires what is due
/// and sleeps again. It never polls: an exchange's progress only moves its deadline later, so a sleep
/// armed for an old deadline wakes early, finds nothing due, and arms again. An exchange whose
/// deadline moves *earlier* than the armed one (``deadlineMovedEarlier(to:)``), or a new exchange due
/// sooner (``watch(_:next:)``), wakes the sleep at once; one reported while the task is looking is
/// kept, and the sleep that follows ends no later than it. A finished exchange is just forgotten.
///
/// The task starts with the first exchange and ends when it wakes and finds none left to watch; the
/// next exchange starts another. It wakes at the deadline it slept for (the nearest one of the
/// exchanges it watched then, which can be a total timeout), so an idle client's task ends by then, a
/// finished exchange costs no wake-up, and exchanges that outlive their client are still timed. The
/// task is detached: it does not take the priority or task-local values of the request that started it.
final class DeadlineScheduler: Sendable {
    private struct State {
        var watched: [ObjectIdentifier: TransferWatchdog] = [:]
        /// Whether the task runs.
        var running = false
        /// The deadline the current sleep ends at; `nil` when it sleeps without one, or does not sleep.
        var armedAt: Duration?
        /// Whether the task is asleep or about to park (a wake then ends the sleep).
        var sleeping = false
        /// A wake arrived before the sleep parked: the sleep ends at once.
        var wakeRequested = false
        /// The earliest deadline reported while the task was looking (it may have missed it).
        var reportedWhileLooking: Duration?
        /// Something the task was looking at changed in a way a deadline does not describe (the last
        /// exchange went while it slept without a deadline): look again before sleeping.
        var lookAgain = false
        /// Ends the parked sleep early.
        var wake: CheckedContinuation<Void, Never>?

        /// An exchange is now due at `deadline`: ends the sleep when that is before the armed
        /// deadline, or keeps it for the sleep being prepared.
        mutating func report(_ deadline: Duration) -> CheckedContinuation<Void, Never>? {
            guard sleeping else {
                reportedWhileLooking = min(reportedWhileLooking ?? deadline, deadline)
                return nil
            }
            if let armedAt, deadline >= armedAt { return nil }
            return takeWake()
        }

        /// Ends the sleep whatever it was armed for (or makes the task look again).
        mutating func wakeAlways() -> CheckedContinuation<Void, Never>? {
            guard sleeping else {
                lookAgain = true
                return nil
            }
            return takeWake()
        }

        private mutating func takeWake() -> CheckedContinuation<Void, Never>? {
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
                Task.detached(priority: .high) { [self] in await run() }
                return nil
            }
            return state.report(next)
        }
        wake?.resume()
    }

    /// Stops watching a finished exchange. The sleep is not woken (a late wake finds nothing due)
    /// unless it has no deadline and nothing is left to watch: then the task ends.
    func forget(_ watchdog: TransferWatchdog) {
        let wake = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.watched.removeValue(forKey: ObjectIdentifier(watchdog))
            guard state.watched.isEmpty, state.armedAt == nil else { return nil }
            return state.wakeAlways()
        }
        wake?.resume()
    }

    /// A watched exchange's nearest deadline is now `deadline`, earlier than before.
    func deadlineMovedEarlier(to deadline: Duration) {
        state.withLock { $0.report(deadline) }?.resume()
    }

    /// The number of exchanges watched now, whether the task runs, whether it is parked in its sleep,
    /// and the deadline that sleep ends at (`nil` for none).
    var load: (watched: Int, running: Bool, parked: Bool, armedAt: Duration?) {
        state.withLock { ($0.watched.count, $0.running, $0.wake != nil, $0.armedAt) }
    }

    private func run() async {
        while true {
            let watched = state.withLock { state -> [TransferWatchdog] in
                state.reportedWhileLooking = nil
                state.lookAgain = false
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
            enum Step { case sleep(Duration?), lookAgain, end }
            let step = state.withLock { state -> Step in
                for id in ended { state.watched.removeValue(forKey: id) }
                // Timeouts fired (their callbacks may start or end exchanges): look again first.
                guard !state.lookAgain, expired.isEmpty else { return .lookAgain }
                if state.watched.isEmpty {
                    state.running = false
                    return .end
                }
                let deadline = switch (next, state.reportedWhileLooking) {
                case (let next?, let reported?): min(next, reported)
                case (let next, nil): next
                case (nil, let reported): reported
                }
                state.armedAt = deadline
                state.sleeping = true
                state.wakeRequested = false
                return .sleep(deadline)
            }
            for (kind, error, onExpire) in expired { onExpire(kind, error) }
            switch step {
            case .sleep(let deadline): await sleep(until: deadline)
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
        state.withLock { $0.wakeAlways() }?.resume()
    }
}
