import Synchronization

/// Lets a task other than the reader stop a ``ResponsesEventStream``: ``interrupt()`` cancels the
/// response body being read (a read in progress ends at once) and makes the stream's next step throw
/// `CancellationError` instead of retrying or connecting again.
///
/// For a reader that cannot be cancelled as a task: the built-in backend's turn is read by the runtime's
/// turn task, and a backend's `interrupt` may come from elsewhere. A connection still waiting for its
/// response head, or a retry's backoff, ends at its next step (cancelling the reading task ends both
/// at once).
package final class StreamInterruption: Sendable {
    private struct State {
        var interrupted = false
        var cancelBody: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    package init() {}

    /// Whether ``interrupt()`` was called.
    package var isInterrupted: Bool { state.withLock { $0.interrupted } }

    /// Stops the stream: cancels the body being read, and every later step throws `CancellationError`.
    package func interrupt() {
        let cancel = state.withLock { state -> (@Sendable () -> Void)? in
            state.interrupted = true
            defer { state.cancelBody = nil }
            return state.cancelBody
        }
        cancel?()
    }

    /// Registers the body now being read (replacing an earlier one); cancelled at once when the stream
    /// is already interrupted.
    func reading(_ cancel: @escaping @Sendable () -> Void) {
        let interrupted = state.withLock { state -> Bool in
            if !state.interrupted { state.cancelBody = cancel }
            return state.interrupted
        }
        if interrupted { cancel() }
    }
}
