public import CodexCore
public import Foundation

/// A read-only snapshot of one operation, readable while it runs. Its dimensions are independent:
/// lifecycle state, availability, blockers and whether a completion is saved.
public struct AgentStructuredRecoveryStatus: Sendable, Hashable {
    /// The saved lifecycle state (a stale `running` record with no lease holder reads as `interrupted`).
    public enum State: String, Sendable, Hashable, Codable {
        case prepared, running, interrupted, completed, failed, cancelled, suspended, acknowledged, abandoned
    }

    /// What the host can do now, derived in priority order.
    public enum Availability: String, Sendable, Hashable, Codable {
        case authenticationRequired, permanentlyCancelled, acknowledged, abandoned, suspended, completionSaved, expired, blocked,
             exhausted, failed, waiting, running, ready, replacementEligible
    }

    /// A suggestion; mutating calls recheck the current state.
    public enum SuggestedAction: String, Sendable, Hashable, Codable {
        case execute, resume, readReceipt, manualRetry, signIn, acknowledge, abandon, wait
    }

    /// One attempt's summary.
    public struct Attempt: Sendable, Hashable {
        /// The attempt ID (its `x-client-request-id`).
        public var id: UUID
        /// 1-based number.
        public var number: Int
        /// Why it was made.
        public var reason: AgentRecoveryAttempt.Reason?
        /// When its budget was reserved.
        public var reservedAt: Date
        /// `reserved`, `transmissionAuthorized` (not proof of server acceptance), `failed` or `completed`.
        public var state: String
        /// The provider response ID, if one was seen (diagnostic only).
        public var responseID: String?
        /// The last sequence number seen (diagnostic only).
        public var lastSequenceNumber: Int?
        /// The failure code, for a failed attempt.
        public var failureCode: String?
    }

    /// The operation.
    public var operationID: UUID
    /// The lifecycle state.
    public var state: State
    /// The derived availability.
    public var availability: Availability
    /// Conditions that block progress.
    public var blockers: [AgentRecoveryBlocker]
    /// Whether a validated completion is saved (independent of the lifecycle state).
    public var hasSavedCompletion: Bool
    /// Attempts spent.
    public var attemptsUsed: Int
    /// The budget.
    public var maximumAttempts: Int
    /// Attempts left.
    public var remainingAttempts: Int { max(0, maximumAttempts - attemptsUsed) }
    /// The earliest time of the next attempt, if a cooldown is saved.
    public var nextAttemptAt: Date?
    /// When permission to start attempts ends.
    public var expiresAt: Date?
    /// The first operation of this job's retry chain.
    public var rootOperationID: UUID?
    /// The operation this one is a manual retry of.
    public var previousOperationID: UUID?
    /// The manual-retry successor, if one was created.
    public var successorOperationID: UUID?
    /// Per-attempt summaries (empty when redacted).
    public var attempts: [Attempt]
    /// The last provider response ID (diagnostic only; not retrievable).
    public var responseID: String?
    /// The last sequence number seen.
    public var lastSequenceNumber: Int?
    /// The last failure (nil when redacted).
    public var lastFailure: AgentRecoveryFailure?
    /// Suggested next steps.
    public var suggestedActions: [SuggestedAction]
    /// Whether details were withheld because the current account is another one or signed out.
    public var isRedacted: Bool
}

/// A saved, validated completion and what it was produced for.
public struct AgentStructuredRecoveryReceipt: Sendable, Hashable {
    /// The operation.
    public var operationID: UUID
    /// The exact validated UTF-8 JSON bytes.
    public var payload: [UInt8]
    /// The original output contract.
    public var format: AgentStructuredOutputFormat
    /// The original host contract version.
    public var contractVersion: String?
    /// The account binding it belongs to.
    public var binding: String
    /// The host job ID.
    public var hostJobID: String?
    /// The host input revision.
    public var inputRevision: String?
    /// The first operation of the retry chain.
    public var rootOperationID: UUID?
    /// The operation this one retried.
    public var previousOperationID: UUID?
    /// When the completion was saved.
    public var completedAt: Date?

    /// Decodes the payload with the original type (migrate in the host, then commit idempotently).
    public func decode<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(T.self, from: Data(payload))
    }
}
