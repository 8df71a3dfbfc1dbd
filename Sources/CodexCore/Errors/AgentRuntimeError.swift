public import Foundation

/// The one public error of CodexKit's runtime layer: a stable code, a log-safe message and optional
/// HTTP, retry, interruption and execution-limit details.
///
/// ```swift
/// do {
///     _ = try await runtime.send(request, in: threadID)
/// } catch let error as AgentRuntimeError where error.code == .threadBusy {
///     // one persistent turn per thread
/// } catch let error as AgentRuntimeError where error.executionLimit == .toolCalls {
///     // the turn used up its tool-call budget
/// }
/// ```
///
/// ``description`` never contains credentials, prompts or model output.
public struct AgentRuntimeError: Error, Sendable, CustomStringConvertible {
    /// A stable snake_case error code. Unknown codes keep their raw value.
    public struct Code: OpenVocabulary, ExpressibleByStringLiteral {
        /// The code text.
        public let rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Creates a code from a literal.
        public init(stringLiteral value: String) { rawValue = value }

        /// A second persistent turn was started on a busy thread.
        public static let threadBusy: Code = "thread_busy"
        /// No such thread.
        public static let threadNotFound: Code = "thread_not_found"
        /// A custom backend's stream ended without `turnCompleted`.
        public static let turnSummaryMissing: Code = "turn_summary_missing"
        /// The Responses stream ended without `response.completed`.
        public static let responsesStreamDisconnected: Code = "responses_stream_disconnected"
        /// A tool result with an unknown, duplicate, mismatched or late invocation.
        public static let invalidToolResult: Code = "invalid_tool_result"
        /// The backend does not support steering.
        public static let steeringUnsupported: Code = "steering_unsupported"
        /// The steering queue is full.
        public static let steeringQueueFull: Code = "steering_queue_full"
        /// The turn is not active (stale turn ID or finished turn).
        public static let turnNotActive: Code = "turn_not_active"
        /// The account's quota or usage limit is exhausted (never retried).
        public static let quotaExceeded: Code = "quota_exceeded"
        /// A turn budget was exhausted; see ``AgentRuntimeError/executionLimit``.
        public static let executionLimitExceeded: Code = "execution_limit_exceeded"
        /// The runtime configuration is invalid.
        public static let invalidConfiguration: Code = "invalid_configuration"
        /// Turn limits are invalid.
        public static let invalidTurnLimits: Code = "invalid_turn_limits"
        /// The request's context could not be encoded.
        public static let invalidRequestContext: Code = "invalid_request_context"
        /// The response format's name or schema is unusable.
        public static let invalidResponseFormat: Code = "invalid_response_format"
        /// The response schema uses a keyword outside the supported subset.
        public static let unsupportedSchemaKeyword: Code = "unsupported_schema_keyword"
        /// The model's structured output failed schema validation.
        public static let structuredOutputInvalid: Code = "structured_output_invalid"
        /// The model's structured output did not decode into the requested type.
        public static let structuredOutputDecodingFailed: Code = "structured_output_decoding_failed"
        /// A required structured output was not produced.
        public static let structuredOutputMissing: Code = "structured_output_missing"
        /// A structured payload exceeded its size limit.
        public static let structuredOutputTooLarge: Code = "structured_output_too_large"
        /// An image exceeds the size limit.
        public static let imageTooLarge: Code = "image_too_large"
        /// Too many images in one message.
        public static let tooManyImages: Code = "too_many_images"
        /// A tool definition is invalid (for example its name).
        public static let invalidToolDefinition: Code = "invalid_tool_definition"
        /// The provider rejected the request (HTTP 4xx other than auth and rate limits).
        public static let invalidRequest: Code = "invalid_request"
        /// Authentication failed or is missing.
        public static let unauthorized: Code = "unauthorized"
        /// The account may not do this (HTTP 403).
        public static let forbidden: Code = "forbidden"
        /// Rate limited (HTTP 429 without a quota code).
        public static let rateLimited: Code = "rate_limited"
        /// The provider failed (HTTP 5xx or `response.failed`).
        public static let providerError: Code = "provider_error"
        /// The provider ended the response as incomplete.
        public static let responseIncomplete: Code = "response_incomplete"
        /// A network failure.
        public static let transportFailure: Code = "transport_failure"
        /// A timeout (connect, first byte, idle or total).
        public static let timedOut: Code = "timed_out"
        /// The work was cancelled.
        public static let cancelled: Code = "cancelled"
        /// A stored record could not be read.
        public static let storageFailure: Code = "storage_failure"
        /// A state store refused a write that contradicts what it holds.
        public static let storageConflict: Code = "storage_conflict"
        /// A stored history is not a valid Responses input (an unanswered tool call, an orphaned
        /// reasoning item, a result without its call); it is refused rather than sent.
        public static let historyReplayInvalid: Code = "history_replay_invalid"
        /// An SSE event grew past the configured maximum size.
        public static let sseEventTooLarge: Code = "sse_event_too_large"
        /// A stream event's JSON could not be parsed.
        public static let responsesEventMalformed: Code = "responses_event_malformed"
        /// The input exceeds the model's context window.
        public static let contextLengthExceeded: Code = "context_length_exceeded"
        /// A thread's context could not be compacted (nothing to compact, no way to compact, or an
        /// unusable summary); nothing was stored.
        public static let compactionUnavailable: Code = "compaction_unavailable"
        /// A remote compaction's reply would have replaced the history with something unusable: no items,
        /// an item type the Responses API does not document, or a `system`/`developer` message it was
        /// not sent. It was refused; the thread keeps its uncompacted history.
        public static let compactionInvalid: Code = "compaction_invalid"
        /// A memory capture could not run: nothing to capture from, or a reply that was not a capture.
        public static let memoryCaptureFailed: Code = "memory_capture_failed"
        /// The provider is overloaded and asked the client to slow down.
        public static let providerOverloaded: Code = "provider_overloaded"
        /// A response body exceeded its size limit.
        public static let responseTooLarge: Code = "response_too_large"
        /// An endpoint URL is not allowed (not https, or http off loopback, or has userinfo/query/fragment).
        public static let invalidEndpoint: Code = "invalid_endpoint"
        /// No credentials are available.
        public static let notSignedIn: Code = "not_signed_in"
        /// A refreshed or reloaded session belongs to a different account.
        public static let accountMismatch: Code = "account_mismatch"
        /// Refreshing the session failed permanently (expired, reused or revoked refresh token).
        public static let refreshFailed: Code = "refresh_failed"
        /// Device-code sign-in is not enabled on the issuer.
        public static let deviceCodeUnavailable: Code = "device_code_unavailable"
        /// Device-code sign-in was not approved in time.
        public static let deviceCodeExpired: Code = "device_code_expired"
        /// A stored secret or credentials file is unsafe (symlink, wrong permissions) or unreadable.
        public static let secureStoreFailure: Code = "secure_store_failure"
        /// The auth provider cannot sign in, switch sessions or sign out (an API key, a fixed session).
        public static let sessionManagementUnsupported: Code = "session_management_unsupported"
        /// A sign-in finished after the session was signed out or replaced; its result was not used.
        public static let sessionReplaced: Code = "session_replaced"
        /// The model repeated a tool call's ID with different arguments within one turn.
        public static let responsesToolCallConflict: Code = "responses_tool_call_conflict"
        /// A buffered observation's reader fell further behind than the buffer's limit; the sequence
        /// ended rather than grow.
        public static let observationBufferOverflow: Code = "observation_buffer_overflow"
        /// No model the host's selection policy accepts is available to the account.
        public static let modelUnavailable: Code = "model_unavailable"
        /// The runtime's backend cannot run structured recovery (it has no SDK-owned recovery adapter).
        public static let structuredRecoveryUnsupported: Code = "structured_recovery_unsupported"
        /// No stored approval has that ID.
        public static let approvalNotFound: Code = "approval_not_found"
        /// An approval's answer was refused: the tool's definition or the call's arguments changed since
        /// it was asked (its digest differs), or it was already answered otherwise.
        public static let approvalStale: Code = "approval_stale"
        /// A durable turn parked until its approval is answered; it continues when resumed.
        public static let turnWaitingForApproval: Code = "turn_waiting_for_approval"
        /// The turn cannot be resumed: it has no journal, it is not running or waiting, it already ended,
        /// or the runtime's turn recovery policy does not resume.
        public static let turnNotResumable: Code = "turn_not_resumable"
        /// The host declined to authorize sending a resumed turn's model request again.
        public static let attemptNotAuthorized: Code = "attempt_not_authorized"
        /// A resumed turn's model request used up its attempt budget.
        public static let attemptsExhausted: Code = "attempts_exhausted"
    }

    /// HTTP details of a failed provider response.
    public struct HTTPDetails: Sendable, Hashable, Codable {
        /// The HTTP status.
        public var statusCode: Int
        /// The provider's error code, e.g. `insufficient_quota`.
        public var providerCode: String?
        /// The provider's error type, e.g. `invalid_request_error`.
        public var providerType: String?
        /// The request ID the provider reported.
        public var requestID: String?
        /// How long the provider asked to wait, capped at one day.
        public var retryAfter: TimeInterval?

        /// Creates HTTP details.
        public init(statusCode: Int, providerCode: String? = nil, providerType: String? = nil, requestID: String? = nil, retryAfter: TimeInterval? = nil) {
            self.statusCode = statusCode
            self.providerCode = providerCode
            self.providerType = providerType
            self.requestID = requestID
            self.retryAfter = retryAfter.map { min(max($0, 0), 86_400) }
        }
    }

    /// Whether a retry could have replayed output the caller already saw.
    public enum RetrySafety: String, Sendable, Hashable, Codable {
        /// No output had been delivered: a retry is a clean replay.
        case beforeOutput
        /// Output had been delivered: no automatic retry.
        case outputAlreadyEmitted
    }

    /// Retry bookkeeping at the time of failure.
    public struct RetryDetails: Sendable, Hashable, Codable {
        /// The attempt that failed (1-based).
        public var attempt: Int
        /// The attempts allowed.
        public var maximumAttempts: Int
        /// Whether the failure class is retryable at all.
        public var isRetryable: Bool
        /// Whether a retry was still safe.
        public var safety: RetrySafety

        /// Creates retry details.
        public init(attempt: Int, maximumAttempts: Int, isRetryable: Bool, safety: RetrySafety) {
            self.attempt = attempt
            self.maximumAttempts = maximumAttempts
            self.isRetryable = isRetryable
            self.safety = safety
        }
    }

    /// Where a stream stopped when it was interrupted.
    public struct InterruptionDetails: Sendable, Hashable, Codable {
        /// The provider's response ID, if one was seen.
        public var responseID: String?
        /// The last `sequence_number` received.
        public var lastSequenceNumber: Int?
        /// Whether any output had been delivered.
        public var hadOutput: Bool
        /// Whether any tool activity had been seen.
        public var hadToolActivity: Bool
        /// Whether the provider reported the response complete before the failure.
        public var providerCompleted: Bool
        /// The transport error domain, e.g. `NSURLErrorDomain`.
        public var transportDomain: String?
        /// The transport error code.
        public var transportCode: Int?

        /// Creates interruption details.
        public init(
            responseID: String? = nil, lastSequenceNumber: Int? = nil, hadOutput: Bool = false, hadToolActivity: Bool = false,
            providerCompleted: Bool = false, transportDomain: String? = nil, transportCode: Int? = nil
        ) {
            self.responseID = responseID
            self.lastSequenceNumber = lastSequenceNumber
            self.hadOutput = hadOutput
            self.hadToolActivity = hadToolActivity
            self.providerCompleted = providerCompleted
            self.transportDomain = transportDomain
            self.transportCode = transportCode
        }
    }

    /// The stable code.
    public var code: Code
    /// A short, log-safe explanation.
    public var message: String
    /// HTTP details, for provider responses.
    public var http: HTTPDetails?
    /// Retry bookkeeping.
    public var retry: RetryDetails?
    /// Where an interrupted stream stopped.
    public var interruption: InterruptionDetails?
    /// Which budget was exhausted, for `execution_limit_exceeded`.
    public var executionLimit: AgentExecutionLimit?
    /// Where in a byte stream the problem was found (for example an SSE framing or JSON error).
    public var byteOffset: Int?
    /// The error that caused this one, if any (not part of ``description``).
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(
        code: Code,
        message: String,
        http: HTTPDetails? = nil,
        retry: RetryDetails? = nil,
        interruption: InterruptionDetails? = nil,
        executionLimit: AgentExecutionLimit? = nil,
        byteOffset: Int? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.http = http
        self.retry = retry
        self.interruption = interruption
        self.executionLimit = executionLimit
        self.byteOffset = byteOffset
        self.underlying = underlying
    }

    /// An execution-limit error for `limit`.
    public static func executionLimitExceeded(_ limit: AgentExecutionLimit) -> AgentRuntimeError {
        AgentRuntimeError(code: .executionLimitExceeded, message: "the turn exhausted its \(limit.rawValue) budget", executionLimit: limit)
    }

    /// The error with whatever it holds of `secrets` (tokens, API keys) replaced by `<redacted>` in its
    /// message, provider code and type, request ID, and interruption details, and in the errors it
    /// wraps: whatever a server echoed back, in any form ``SecretRedactor`` finds (a run of 12 or more
    /// characters, any case, base64, base64url, URL-encoded, spaced out). The transport applies it with
    /// the credentials in use before an error leaves it.
    public func redacting(_ secrets: [String]) -> AgentRuntimeError {
        redacting(SecretRedactor(secrets: secrets))
    }

    /// The error with whatever `redactor` finds replaced by `<redacted>` (see ``redacting(_:)-([String])``).
    public func redacting(_ redactor: SecretRedactor) -> AgentRuntimeError {
        guard !redactor.isEmpty else { return self }
        var copy = self
        copy.message = redactor.redact(message)
        copy.http?.providerCode = redactor.redact(ifPresent: http?.providerCode)
        copy.http?.providerType = redactor.redact(ifPresent: http?.providerType)
        copy.http?.requestID = redactor.redact(ifPresent: http?.requestID)
        copy.interruption?.responseID = redactor.redact(ifPresent: interruption?.responseID)
        copy.interruption?.transportDomain = redactor.redact(ifPresent: interruption?.transportDomain)
        if let wrapped = underlying as? AgentRuntimeError { copy.underlying = wrapped.redacting(redactor) }
        return copy
    }

    /// `code: message` with the HTTP status, provider code and request ID when present. Log-safe.
    public var description: String {
        var text = "\(code.rawValue): \(message)"
        if let http {
            text += " (HTTP \(http.statusCode)"
            if let providerCode = http.providerCode { text += ", provider code \(providerCode)" }
            if let requestID = http.requestID { text += ", request \(requestID)" }
            text += ")"
        }
        if let executionLimit { text += " (limit: \(executionLimit.rawValue))" }
        if let byteOffset { text += " (at byte \(byteOffset))" }
        return text
    }
}

extension AgentRuntimeError: Hashable {
    /// Hashes every field but ``underlying``.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(http)
        hasher.combine(retry)
        hasher.combine(interruption)
        hasher.combine(executionLimit)
        hasher.combine(byteOffset)
    }

    /// Equal when every field but ``underlying`` is equal.
    public static func == (lhs: AgentRuntimeError, rhs: AgentRuntimeError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.http == rhs.http && lhs.retry == rhs.retry
            && lhs.interruption == rhs.interruption && lhs.executionLimit == rhs.executionLimit && lhs.byteOffset == rhs.byteOffset
    }
}

extension AgentRuntimeError: Codable {
    private enum CodingKeys: String, CodingKey {
        case code, message, http, retry, interruption, executionLimit, byteOffset
    }

    /// Decodes every field but ``underlying``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = try container.decode(Code.self, forKey: .code)
        message = try container.decode(String.self, forKey: .message)
        http = try container.decodeIfPresent(HTTPDetails.self, forKey: .http)
        retry = try container.decodeIfPresent(RetryDetails.self, forKey: .retry)
        interruption = try container.decodeIfPresent(InterruptionDetails.self, forKey: .interruption)
        executionLimit = try container.decodeIfPresent(AgentExecutionLimit.self, forKey: .executionLimit)
        byteOffset = try container.decodeIfPresent(Int.self, forKey: .byteOffset)
        underlying = nil
    }

    /// Encodes every field but ``underlying``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code, forKey: .code)
        try container.encode(message, forKey: .message)
        try container.encodeIfPresent(http, forKey: .http)
        try container.encodeIfPresent(retry, forKey: .retry)
        try container.encodeIfPresent(interruption, forKey: .interruption)
        try container.encodeIfPresent(executionLimit, forKey: .executionLimit)
        try container.encodeIfPresent(byteOffset, forKey: .byteOffset)
    }
}
