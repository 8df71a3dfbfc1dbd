public import Foundation

/// Which failures allow an automatic replacement attempt within the saved budget, and the backoff
/// before it. Saved with the operation: a relaunch uses the same policy.
///
/// Never replaceable whatever the policy says: tool activity, an execution-limit breach, quota
/// exhaustion, HTTP 401/403 (401 goes through credential recovery instead).
public struct AgentRecoveryRetryPolicy: Sendable, Hashable, Codable {
    /// Backoff before the first replacement, in seconds. Default 1.
    public var initialBackoff: TimeInterval
    /// Largest backoff, in seconds (server `Retry-After` may still ask for longer, capped at one day).
    /// Default 60.
    public var maximumBackoff: TimeInterval
    /// Whether network loss, timeouts and a stream that ends without `response.completed` are replaced.
    /// Default `true`.
    public var replacesTransportInterruptions: Bool
    /// HTTP statuses that are replaced. Default 429, 500, 502, 503, 504.
    public var retryableStatuses: Set<Int>
    /// Provider codes of `response.failed` that are replaced. Default none.
    public var retryableProviderCodes: Set<String>
    /// Whether invalid JSON, a schema violation or a decoding failure is replaced. Default `false`.
    public var retriesInvalidStructuredOutput: Bool

    /// Creates a policy.
    /// - Parameters:
    ///   - initialBackoff: Seconds before the first replacement; clamped to 0…86,400.
    ///   - maximumBackoff: Largest backoff in seconds; clamped to `initialBackoff`…86,400.
    ///   - replacesTransportInterruptions: Replace network loss, timeouts and premature EOF.
    ///   - retryableStatuses: HTTP statuses to replace (401 and 403 are ignored).
    ///   - retryableProviderCodes: `response.failed` codes to replace.
    ///   - retriesInvalidStructuredOutput: Replace invalid output.
    public init(
        initialBackoff: TimeInterval = 1,
        maximumBackoff: TimeInterval = 60,
        replacesTransportInterruptions: Bool = true,
        retryableStatuses: Set<Int> = [429, 500, 502, 503, 504],
        retryableProviderCodes: Set<String> = [],
        retriesInvalidStructuredOutput: Bool = false
    ) {
        let initial = initialBackoff.isFinite ? min(max(initialBackoff, 0), 86_400) : 1
        self.initialBackoff = initial
        self.maximumBackoff = maximumBackoff.isFinite ? min(max(maximumBackoff, initial), 86_400) : max(initial, 60)
        self.replacesTransportInterruptions = replacesTransportInterruptions
        self.retryableStatuses = retryableStatuses.subtracting([401, 403])
        self.retryableProviderCodes = retryableProviderCodes
        self.retriesInvalidStructuredOutput = retriesInvalidStructuredOutput
    }

    /// Encodes the policy with both sets in ascending order, so equal policies always encode to the same
    /// bytes (a `Set`'s iteration order differs between equal instances); the saved record is then a
    /// function of its contents, and re-encoding a decoded record reproduces the file byte for byte.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(initialBackoff, forKey: .initialBackoff)
        try container.encode(maximumBackoff, forKey: .maximumBackoff)
        try container.encode(replacesTransportInterruptions, forKey: .replacesTransportInterruptions)
        try container.encode(retryableStatuses.sorted(), forKey: .retryableStatuses)
        try container.encode(retryableProviderCodes.sorted(), forKey: .retryableProviderCodes)
        try container.encode(retriesInvalidStructuredOutput, forKey: .retriesInvalidStructuredOutput)
    }

    /// The backoff before replacement number `replacement` (1-based): doubling from
    /// ``initialBackoff``, capped at ``maximumBackoff``, no jitter (the delay is persisted).
    public func backoff(beforeReplacement replacement: Int) -> TimeInterval {
        let exponent = Double(max(0, min(replacement - 1, 62)))
        return min(initialBackoff * pow(2, exponent), maximumBackoff)
    }
}

/// Why an operation cannot make progress right now; it can coexist with remaining budget, and clearing
/// it does not reset that budget.
public enum AgentRecoveryBlocker: String, Sendable, Hashable, Codable {
    /// The original account must sign in again.
    case authenticationRequired
    /// The current session belongs to another account.
    case accountMismatch
    /// The saved configuration (endpoint, model) cannot be used.
    case configurationUnavailable
    /// The saved output contract differs from the caller's.
    case incompatibleRecord
    /// The store cannot be read or written.
    case storageUnavailable
}

/// The typed, log-safe essentials of the last failure, as saved in the record.
public struct AgentRecoveryFailure: Sendable, Hashable, Codable {
    /// The stable error code (an ``CodexCore/AgentRuntimeError`` or ``AgentRecoveryError`` code).
    public var code: String
    /// The HTTP status, when the failure was an HTTP response.
    public var httpStatus: Int?
    /// The provider's error code, when it sent one.
    public var providerCode: String?
    /// The transport error domain, for interruptions.
    public var transportDomain: String?
    /// The transport error code, for interruptions.
    public var transportCode: Int?
    /// Whether any output had arrived before the failure.
    public var hadOutput: Bool
    /// Whether tool activity was seen.
    public var hadToolActivity: Bool

    /// Creates a failure summary.
    public init(
        code: String, httpStatus: Int? = nil, providerCode: String? = nil, transportDomain: String? = nil,
        transportCode: Int? = nil, hadOutput: Bool = false, hadToolActivity: Bool = false
    ) {
        self.code = code
        self.httpStatus = httpStatus
        self.providerCode = providerCode
        self.transportDomain = transportDomain
        self.transportCode = transportCode
        self.hadOutput = hadOutput
        self.hadToolActivity = hadToolActivity
    }
}
