import Synchronization

/// A `Clock` whose time moves only when ``advance(by:)`` is called, so backoff, timeouts and
/// cooldowns are tested without real waiting.
///
/// ```swift
/// let clock = ManualClock()
/// let task = Task { try await clock.sleep(for: .seconds(4)) }
/// await clock.waitForSleepers(count: 1)
/// clock.advance(by: .seconds(4)) // the sleeper resumes
/// ```
///
/// Cancelling a sleeping task resumes it with `CancellationError`.
public final class ManualClock: Clock {
    /// A point on the manual time line.
    public struct Instant: InstantProtocol {
        /// Time since the clock's start.
        public var offset: Duration

        /// Creates an instant.
        public init(offset: Duration) { self.offset = offset }
        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The duration from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Orders instants.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Int: Sleeper] = [:]
        var cancelled: Set<Int> = []
    }

    private let state = Mutex(State())

    /// Creates a clock at offset zero.
    public init() {}

    /// The current instant.
    public var now: Instant { state.withLock { $0.now } }

    /// Zero: the clock is exact.
    public var minimumResolution: Duration { .zero }

    /// The number of tasks currently sleeping.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Suspends until the clock reaches `deadline`, or throws `CancellationError` when cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Action { case wait, resume, cancel }
                let action = state.withLock { state -> Action in
                    if state.cancelled.remove(id) != nil { return .cancel }
                    if deadline <= state.now { return .resume }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return .wait
                }
                switch action {
                case .wait: break
                case .resume: continuation.resume()
                case .cancel: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                if let sleeper = state.sleepers.removeValue(forKey: id) { return sleeper }
                state.cancelled.insert(id)
                return nil
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and resumes every sleeper whose deadline has come, earliest first.
    public func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let ready = state.sleepers.filter { $0.value.deadline <= now }
            for key in ready.keys { state.sleepers.removeValue(forKey: key) }
            return ready.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Waits (yielding) until at least `count` tasks are sleeping on this clock, or the waiting task is
    /// cancelled (a test's time limit ends the wait instead of spinning forever).
    public func waitForSleepers(count: Int) async {
        while sleeperCount < count, !Task.isCancelled { await Task.yield() }
    }
}
