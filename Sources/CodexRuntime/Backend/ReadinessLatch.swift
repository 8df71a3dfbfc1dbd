import Synchronization

/// A one-shot latch: opened once, with success or an error; the first outcome wins. Waiters before the
/// outcome suspend; waiters after it return (or throw) at once. Cancelling a waiter only ends that wait.
final class ReadinessLatch: Sendable {
    private struct State {
        var outcome: Result<Void, any Error>?
        var waiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Whether an outcome was set.
    var isSettled: Bool { state.withLock { $0.outcome != nil } }

    /// Opens the latch successfully (ignored when already settled).
    func open() { settle(.success(())) }

    /// Opens the latch with `error` (ignored when already settled).
    func fail(_ error: any Error) { settle(.failure(error)) }

    private func settle(_ outcome: Result<Void, any Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            guard state.outcome == nil else { return [] }
            state.outcome = outcome
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: outcome) }
    }

    /// Returns once the latch opened successfully.
    ///
    /// - Throws: The latch's error, or `CancellationError` when the waiting task is cancelled.
    func wait() async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = state.withLock { state in
                    if let outcome = state.outcome { return outcome }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(throwing: CancellationError())
        }
    }
}
