import CodexCore
import CodexSchema
import Foundation

/// `<id>.json`: everything the store keeps about one operation — the frozen request, the attempt
/// ledger, the lifecycle state and, once validated and saved, the completion.
struct RecoveryOperationRecord: RecoveryRecord, Equatable {
    /// The saved lifecycle state.
    enum State: String, Codable, Sendable {
        case prepared, running, interrupted, completed, failed, cancelled, suspended
    }

    /// One generation attempt's summary.
    struct Attempt: Codable, Sendable, Equatable {
        /// The state an attempt reached.
        enum State: String, Codable, Sendable {
            case reserved, transmissionAuthorized, failed, completed
        }

        var id: UUID
        var number: Int
        var reason: String
        var reservedAt: Date
        var state: State
        var responseID: String?
        var lastSequenceNumber: Int?
        var failureCode: String?
    }

    /// The frozen request: endpoint, model configuration and the canonical body with its digest.
    struct PreparedRequest: Codable, Sendable, Equatable {
        var endpoint: String
        var model: String
        var reasoningEffort: String?
        var instructions: String?
        var format: AgentStructuredOutputFormat
        /// The canonical Responses body, as UTF-8 text.
        var body: String
        /// Lower-case hex SHA-256 of `body`'s UTF-8 bytes.
        var digest: String
    }

    static let supportedVersions = 2...2
    static let fileSuffix = ".json"
    static let currentVersion = 2
    static let maximumAttemptsRange = 1...1000

    var version: Int = Self.currentVersion
    var operationID: UUID
    var binding: String
    var scope: String?
    var hostJobID: String?
    var inputRevision: String?
    var contractVersion: String?
    var request: PreparedRequest
    var retryPolicy: AgentRecoveryRetryPolicy
    var maximumAttempts: Int
    var expiresAt: Date?
    var state: State
    var attemptsUsed: Int
    var pendingAttemptID: UUID?
    var attempts: [Attempt]
    var nextAttemptAt: Date?
    var responseID: String?
    var lastSequenceNumber: Int?
    var lastFailure: AgentRecoveryFailure?
    var blocker: AgentRecoveryBlocker?
    /// The validated completion, exact UTF-8 JSON text.
    var completedPayload: String?
    var createdAt: Date
    var updatedAt: Date
    var completedAt: Date?
    var previousOperationID: UUID?
    var rootOperationID: UUID?
    var retryActionID: String?
    var successor: SuccessorReservation?
    /// The reason of the next attempt when it is not derived from the ledger (an authentication reissue).
    var nextAttemptReason: AgentRecoveryAttempt.Reason? = nil
    /// The request as the host gave it, so a `.reselect` manual retry can prepare it again.
    var originalRequest: Request? = nil

    /// The successor a manual retry reserved on this (source) operation before creating it.
    struct SuccessorReservation: Codable, Sendable, Equatable {
        var operationID: UUID
        var actionID: String
        var maximumAttempts: Int
        /// The newly selected configuration for `.reselect`, `nil` for `.preserve`.
        var reselectedModel: AgentRecoveryModelConfiguration?
        var expiresAt: Date?
        var retryPolicy: AgentRecoveryRetryPolicy
    }

    func checkInvariants() throws(RecoveryRecordInvariantError) {
        guard Self.maximumAttemptsRange.contains(maximumAttempts) else { throw RecoveryRecordInvariantError("maximumAttempts is out of range") }
        guard (0...maximumAttempts).contains(attemptsUsed) else { throw RecoveryRecordInvariantError("attemptsUsed is out of range") }
        guard attempts.count == attemptsUsed else { throw RecoveryRecordInvariantError("the attempt ledger does not match attemptsUsed") }
        guard (state == .completed) == (completedPayload != nil) else {
            throw RecoveryRecordInvariantError("the completed state and the saved payload disagree")
        }
        guard !binding.isEmpty else { throw RecoveryRecordInvariantError("the record has no account binding") }
        guard SHA256.hexDigest(of: Array(request.body.utf8)) == request.digest else {
            throw RecoveryRecordInvariantError("the prepared body does not match its digest")
        }
        guard case .object(let body)? = try? JSONValue(parsing: Array(request.body.utf8)),
              body["tools"] == .array([]), body["tool_choice"] == .string("none"),
              body["store"] == .bool(false), body["stream"] == .bool(true)
        else { throw RecoveryRecordInvariantError("the prepared body is not a tool-free, unstored, streamed request") }
    }
}
