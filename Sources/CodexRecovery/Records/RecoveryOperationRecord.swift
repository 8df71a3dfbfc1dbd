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

        private enum CodingKeys: String, CodingKey {
            case endpoint, model, reasoningEffort, instructions, format, body, digest
        }

        init(
            endpoint: String, model: String, reasoningEffort: String?, instructions: String?, format: AgentStructuredOutputFormat,
            body: String, digest: String
        ) {
            self.endpoint = endpoint
            self.model = model
            self.reasoningEffort = reasoningEffort
            self.instructions = instructions
            self.format = format
            self.body = body
            self.digest = digest
        }

        /// The format is kept as one canonical JSON string: decoding a nested schema through
        /// `Decodable` costs far more than parsing it with CodexSchema (inventory reads every record).
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            endpoint = try container.decode(String.self, forKey: .endpoint)
            model = try container.decode(String.self, forKey: .model)
            reasoningEffort = try container.decodeIfPresent(String.self, forKey: .reasoningEffort)
            instructions = try container.decodeIfPresent(String.self, forKey: .instructions)
            body = try container.decode(String.self, forKey: .body)
            digest = try container.decode(String.self, forKey: .digest)
            let formatText = try container.decode(String.self, forKey: .format)
            guard case .object(let object)? = try? JSONValue(parsing: Array(formatText.utf8)),
                  case .string(let name)? = object["name"], let schema = object["schema"]
            else {
                throw DecodingError.dataCorruptedError(forKey: .format, in: container, debugDescription: "the saved format is not a format object")
            }
            var strict = true
            if case .bool(let value)? = object["strict"] { strict = value }
            var description: String?
            if case .string(let value)? = object["description"] { description = value }
            format = AgentStructuredOutputFormat(name: name, description: description, rawSchema: schema, strict: strict)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(endpoint, forKey: .endpoint)
            try container.encode(model, forKey: .model)
            try container.encodeIfPresent(reasoningEffort, forKey: .reasoningEffort)
            try container.encodeIfPresent(instructions, forKey: .instructions)
            try container.encode(body, forKey: .body)
            try container.encode(digest, forKey: .digest)
            var object: JSONObject = ["name": .string(format.name), "schema": format.schema, "strict": .bool(format.strict)]
            if let description = format.description { object["description"] = .string(description) }
            try container.encode(JSONValue.object(object).canonicalString(), forKey: .format)
        }
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
        // A saved payload belongs to a completed operation, or to one cancelled after it completed (kept
        // until abandoned, never delivered); a completed operation always has one.
        guard state == .completed ? completedPayload != nil : (completedPayload == nil || state == .cancelled) else {
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
