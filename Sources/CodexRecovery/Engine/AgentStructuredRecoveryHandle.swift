public import CodexCore
public import Foundation

/// The durable identity of one recovery operation. The host persists it in its job transaction before
/// sending; it carries no request content.
public struct AgentStructuredRecoveryHandle: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The operation's ID.
    public let operationID: UUID

    /// Wraps an operation ID (for hosts that stored only the ID).
    public init(operationID: UUID) {
        self.operationID = operationID
    }

    /// The lower-case operation ID.
    public var description: String { operationID.uuidString.lowercased() }
}

/// The model configuration a recovery operation freezes; model selection has already run.
public struct AgentRecoveryModelConfiguration: Sendable, Hashable, Codable {
    /// The model slug.
    public var model: String
    /// The reasoning effort, or `nil` to send none.
    public var reasoningEffort: ReasoningEffort?
    /// Whether reasoning summaries are requested (`summary: "auto"`).
    public var enableReasoningSummaries: Bool
    /// Base instructions, if any.
    public var instructions: String?

    /// Creates a configuration.
    public init(model: String, reasoningEffort: ReasoningEffort? = nil, enableReasoningSummaries: Bool = false, instructions: String? = nil) {
        self.model = model
        self.reasoningEffort = reasoningEffort
        self.enableReasoningSummaries = enableReasoningSummaries
        self.instructions = instructions
    }
}

/// The optional host metadata and limits of a new operation.
public struct AgentRecoveryPreparationOptions: Sendable, Hashable {
    /// The default attempt budget.
    public static let defaultMaximumAttempts = 3
    /// The longest scope, job ID, input revision or contract version, in UTF-8 bytes.
    public static let maximumIdentifierBytes = 1024

    /// Total generation POSTs allowed, including the first and any 401 reissue: 1…1000. Default 3.
    public var maximumAttempts: Int
    /// After this date no new attempt is authorized (a running generation is not cut short).
    public var expiresAt: Date?
    /// Which failures are replaced automatically, and the backoff.
    public var retryPolicy: AgentRecoveryRetryPolicy
    /// Host scope for retention decisions (≤ 1,024 bytes).
    public var scope: String?
    /// The host's stable job ID (≤ 1,024 bytes).
    public var hostJobID: String?
    /// The host's input revision (≤ 1,024 bytes).
    public var inputRevision: String?
    /// The host's contract version for the output (≤ 1,024 bytes).
    public var contractVersion: String?
    /// An earlier operation of the same host job this one replaces (a host's own link for diagnostics,
    /// shown as the status's `previousOperationID`; it carries over no budget, receipt or completion).
    public var previousOperationID: UUID?

    /// Creates options.
    public init(
        maximumAttempts: Int = Self.defaultMaximumAttempts, expiresAt: Date? = nil, retryPolicy: AgentRecoveryRetryPolicy = .init(),
        scope: String? = nil, hostJobID: String? = nil, inputRevision: String? = nil, contractVersion: String? = nil,
        previousOperationID: UUID? = nil
    ) {
        self.maximumAttempts = maximumAttempts
        self.expiresAt = expiresAt
        self.retryPolicy = retryPolicy
        self.scope = scope
        self.hostJobID = hostJobID
        self.inputRevision = inputRevision
        self.contractVersion = contractVersion
        self.previousOperationID = previousOperationID
    }
}

/// One generation attempt the host is asked to authorize.
public struct AgentRecoveryAttempt: Sendable, Hashable {
    /// Why the attempt is made.
    public enum Reason: String, Sendable, Hashable, Codable {
        /// The first attempt.
        case initial
        /// A replacement after an eligible failure.
        case replacement
        /// The POST reissued after an HTTP 401 with renewed credentials.
        case authenticationReissue
    }

    /// The operation.
    public var operationID: UUID
    /// The attempt ID (stable across callback replays; sent as `x-client-request-id`).
    public var id: UUID
    /// 1-based attempt number.
    public var number: Int
    /// The budget.
    public var maximumAttempts: Int
    /// Why it is made.
    public var reason: Reason
    /// The previous attempt's failure, if any.
    public var previousFailure: AgentRecoveryFailure?
    /// The previous attempt's provider response ID, if any (diagnostic only).
    public var previousResponseID: String?
    /// The previous attempt's last sequence number, if any (diagnostic only).
    public var previousSequenceNumber: Int?

    /// Creates an attempt to authorize (for the package's other authorizers, such as a resumed durable
    /// turn's model request).
    package init(
        operationID: UUID, id: UUID, number: Int, maximumAttempts: Int, reason: Reason, previousFailure: AgentRecoveryFailure? = nil,
        previousResponseID: String? = nil, previousSequenceNumber: Int? = nil
    ) {
        self.operationID = operationID
        self.id = id
        self.number = number
        self.maximumAttempts = maximumAttempts
        self.reason = reason
        self.previousFailure = previousFailure
        self.previousResponseID = previousResponseID
        self.previousSequenceNumber = previousSequenceNumber
    }
}
