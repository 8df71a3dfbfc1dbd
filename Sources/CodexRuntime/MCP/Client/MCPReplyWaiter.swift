import CodexSchema

/// Waits for one request's reply. The first outcome wins (the reply, the timeout, the cancellation or
/// the end of the connection), whichever order they arrive in, including before ``wait()`` starts.
final class MCPReplyWaiter: Sendable {
    /// Called on the reader thread with each progress notification of the request.
    let progress: (@Sendable (MCPProgress) -> Void)?
    private let outcome = MCPOnce<Result<JSONValue, any Error>>()

    /// Creates a waiter.
    init(progress: (@Sendable (MCPProgress) -> Void)?) {
        self.progress = progress
    }

    /// Suspends until the outcome is known.
    func wait() async throws -> JSONValue {
        try await outcome.value().get()
    }

    /// Settles the outcome unless it is already settled.
    func finish(_ result: Result<JSONValue, any Error>) {
        outcome.settle(result)
    }
}
