import Synchronization

/// Waits for a shared task's result in a way the waiting task's cancellation ends (the task itself
/// goes on).
enum MCPTaskWait {
    static func result<T: Sendable>(of task: Task<T, any Error>) async -> Result<T, any Error> {
        let once = MCPOnce<Result<T, any Error>>()
        return await withTaskCancellationHandler {
            Task { once.settle(await task.result) }
            return await once.value()
        } onCancel: {
            once.settle(.failure(CancellationError()))
        }
    }
}

/// A value settled once (the first ``settle(_:)`` wins), awaited by one waiter, whichever comes first.
final class MCPOnce<T: Sendable>: Sendable {
    private struct State {
        var waiter: CheckedContinuation<T, Never>?
        var value: T?
        var settled = false
    }

    private let state = Mutex<State>(State())

    /// Settles the value unless it is already settled.
    func settle(_ value: T) {
        let waiter = state.withLock { state -> CheckedContinuation<T, Never>? in
            guard !state.settled else { return nil }
            state.settled = true
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }

    /// The value, once settled.
    func value() async -> T {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> T? in
                if state.settled { return state.value }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
