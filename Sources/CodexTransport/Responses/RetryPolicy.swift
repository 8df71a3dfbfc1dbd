import CodexCore
public import Foundation

/// The ordinary retry policy: how many attempts, how long to wait, which failures qualify.
///
/// Only one retry layer exists (never stacked), it retries only while no output has reached the caller
/// (replay safety), and every wait goes through an injected clock. A server's `Retry-After` (capped at
/// one day) replaces the backoff when it is longer.
public struct RetryPolicy: Sendable, Hashable {
    /// Total attempts including the first (1 = no retries).
    public var maximumAttempts: Int
    /// The first backoff.
    public var initialDelay: Duration
    /// The largest backoff.
    public var maximumDelay: Duration
    /// Random spread applied to each backoff, as a fraction (0.2 → ±20 %).
    public var jitter: Double

    /// Creates a policy; attempts are at least 1, jitter is clamped to 0…1.
    public init(maximumAttempts: Int = 3, initialDelay: Duration = .milliseconds(500), maximumDelay: Duration = .seconds(4), jitter: Double = 0.2) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.initialDelay = max(.zero, initialDelay)
        self.maximumDelay = max(self.initialDelay, maximumDelay)
        self.jitter = min(max(jitter.isFinite ? jitter : 0, 0), 1)
    }

    /// 3 attempts, 0.5 s initial, 4 s cap, 20 % jitter.
    public static let `default` = RetryPolicy()
    /// One attempt.
    public static let disabled = RetryPolicy(maximumAttempts: 1)

    /// Whether the error class may be retried (transient transport errors, the retryable statuses,
    /// retryable stream failures; never quota, auth, invalid requests or execution limits).
    public static func isRetryable(_ error: any Error) -> Bool {
        guard let error = error as? AgentRuntimeError else { return false }
        switch error.code {
        case .quotaExceeded, .unauthorized, .forbidden, .invalidRequest, .contextLengthExceeded, .executionLimitExceeded,
             .sseEventTooLarge, .responsesEventMalformed, .responseTooLarge, .invalidEndpoint:
            return false
        case .transportFailure, .timedOut, .responsesStreamDisconnected:
            return true
        default:
            return error.retry?.isRetryable ?? false
        }
    }

    /// The wait before attempt `attempt + 1` after attempt `attempt` (1-based) failed: exponential backoff
    /// with jitter, or the server's wait when that is longer.
    ///
    /// - Parameters:
    ///   - attempt: The attempt that failed.
    ///   - retryAfter: The server's requested wait in seconds, if any (already capped).
    ///   - random: A source of randomness for the jitter.
    public func delay(afterAttempt attempt: Int, retryAfter: TimeInterval?, using random: inout some RandomNumberGenerator) -> Duration {
        var backoff = initialDelay
        for _ in 1..<max(1, attempt) {
            backoff = backoff * 2
            if backoff >= maximumDelay {
                backoff = maximumDelay
                break
            }
        }
        backoff = min(backoff, maximumDelay)
        if jitter > 0 {
            let factor = Double.random(in: (1 - jitter)...(1 + jitter), using: &random)
            backoff = backoff * factor
        }
        if let retryAfter, retryAfter > 0 {
            let requested = Duration.milliseconds(Int64((retryAfter * 1000).rounded(.up)))
            backoff = max(backoff, requested)
        }
        return backoff
    }
}
