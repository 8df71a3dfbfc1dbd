import CodexCore
import CodexTransport

/// A backend's `waitUntilReady` failed: nothing of the attempt reached the host yet.
struct ReadinessFailure: Error {
    let error: any Error
}

extension TurnDriver {
    /// Decides whether the turn's initial request is tried again after attempt `attempt` failed to
    /// become ready, and waits the policy's backoff on the runtime's clock when it is.
    ///
    /// A readiness failure is by contract safe to retry (no output, no tool effect). The runtime retries
    /// it when the failure class is retryable (``CodexTransport/RetryPolicy/isRetryable(_:)``) and no
    /// lower layer retried it already: a failure that carries retry bookkeeping
    /// (``CodexCore/AgentRuntimeError/retry``, which the built-in backend's transport sets) has had its
    /// retries, and retry layers never stack.
    ///
    /// - Throws: The failure itself (with the runtime's retry bookkeeping when the runtime applied its
    ///   policy), or `CancellationError` when the turn is cancelled during the backoff.
    func readinessRetry(after error: any Error, attempt: Int) async throws {
        try Task.checkCancellation()
        guard var failure = error as? AgentRuntimeError, failure.retry == nil, Self.isRetryable(failure) else { throw error }
        let policy = runtime.configuration.readinessRetryPolicy
        guard attempt < policy.maximumAttempts else {
            failure.retry = .init(attempt: attempt, maximumAttempts: policy.maximumAttempts, isRetryable: true, safety: .beforeOutput)
            throw failure
        }
        var random = SystemRandomNumberGenerator()
        let delay = policy.delay(afterAttempt: attempt, retryAfter: failure.http?.retryAfter, using: &random)
        if let budget = TurnTimeBudget.current, budget.cannotAfford(delay) {
            // The wait would outlast the turn's duration budget: fail now, with the server's wait.
            failure.retry = .init(attempt: attempt, maximumAttempts: policy.maximumAttempts, isRetryable: true, safety: .beforeOutput)
            throw failure
        }
        runtime.configuration.logSink.record(AgentLogEvent(
            level: .notice, category: .retry, name: "retry.scheduled", message: "retrying a turn whose first request was not accepted",
            metadata: [
                "thread_id": plan.threadID.rawValue, "turn_id": plan.turnID.rawValue, "error_code": failure.code.rawValue,
                "attempt": String(attempt), "maximum_attempts": String(policy.maximumAttempts),
                "delay_ms": String(Int(delay.inSeconds * 1000)),
            ]
        ))
        try await runtime.configuration.clock.sleep(for: delay)
    }

    /// The retryable classes: ``CodexTransport/RetryPolicy/isRetryable(_:)``, and failures whose HTTP
    /// status is one of the retryable statuses (``CodexTransport/ResponsesErrorMapper/retryableStatuses``:
    /// 408, 409, 425, 429, 5xx gateways) unless the quota is exhausted.
    static func isRetryable(_ failure: AgentRuntimeError) -> Bool {
        if RetryPolicy.isRetryable(failure) { return true }
        guard let status = failure.http?.statusCode, failure.code != .quotaExceeded else { return false }
        return ResponsesErrorMapper.retryableStatuses.contains(status)
    }
}
