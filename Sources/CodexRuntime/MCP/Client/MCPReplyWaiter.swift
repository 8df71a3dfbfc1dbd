import CodexSchema
import Synchronization

/// Waits for one request's reply. The first outcome wins (the reply, the timeout, the cancellation or
/// the end of the connection), whichever order they arrive in, including before ``wait()`` starts.
final class MCPReplyWaiter: Sendable {
    /// Called on the reader thread with each progress notification of the request.
    let progress: (@Sendable (MCPProgress) -> Void)?
    private let state = Mutex<(continuation: CheckedContinuation<JSONValue, any Error>?, outcome: Result<JSONValue, any Error>?)>((nil, nil))

    /// Creates a waiter.
    init(progress: (@Sendable (MCPProgress) -> Void)?) {
        self.progress = progress
    }

    /// Suspends until the outcome is known.
    func wait() async throws -> JSONValue {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<JSONValue, any Error>? in
                if let outcome = state.outcome { return outcome }
                state.continuation = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// Settles the outcome unless it is already settled; returns whether this call settled it.
    @discardableResult
    func finish(_ outcome: Result<JSONValue, any Error>) -> Bool {
        let continuation = state.withLock { state -> CheckedContinuation<JSONValue, any Error>?? in
            guard state.outcome == nil else { return .none }
            state.outcome = outcome
            defer { state.continuation = nil }
            return .some(state.continuation)
        }
        guard case .some(let waiting) = continuation else { return false }
        waiting?.resume(with: outcome)
        return true
    }
}
