import Foundation

/// One step of a durable turn, recorded in the state store before the action that depends on it, so a
/// new process can continue the turn from its last recorded step (see ``TurnJournaling``).
///
/// A turn's journal is the turn's own record; the thread's history stays what it is (a resumed turn's
/// history is exactly what an uninterrupted turn would have stored).
public enum TurnJournalEntry: Sendable, Hashable, Codable {
    /// The turn began: what a resumed turn needs to send its requests as the first process did (the
    /// input itself is in the thread's history). Always the first entry.
    case turnStarted(TurnJournalSettings)
    /// A model request is about to be sent: the `pass`-th request of the turn (1-based), its `attempt`
    /// (1-based: a request sent again after a crash is a new attempt the host authorizes), and a digest
    /// of its input.
    case modelRequest(pass: Int, attempt: Int, inputDigest: String)
    /// The model asked for `calls` at the end of pass `pass`, after producing `items` (its reasoning and
    /// messages of that pass, kept so a resumed turn can store the round whole). Recorded before any
    /// executor starts.
    case toolCalls(pass: Int, items: [AgentHistoryItem], calls: [ToolInvocation])
    /// An executor is about to start, with the call's idempotency key.
    case toolStarted(ToolInvocationID, idempotencyKey: String)
    /// A call finished (recorded before its result is submitted): a resumed turn reuses it, never runs
    /// the call again.
    case toolFinished(ToolResultEnvelope)
    /// An approval was asked for, bound to `digest` (``ToolDefinition/approvalDigest(arguments:)``).
    case approvalRequested(AgentApprovalRequest, digest: String)
    /// An approval was answered.
    case approvalAnswered(AgentApprovalID, AgentApprovalDecision)
    /// The turn's result was committed: nothing is left to resume.
    case committed

    /// The entry's kind, as stored and logged: `model_request`, `tool_calls`, `tool_started`,
    /// `tool_finished`, `approval_requested`, `approval_answered`, `committed`.
    public var kind: String {
        switch self {
        case .turnStarted: "turn_started"
        case .modelRequest: "model_request"
        case .toolCalls: "tool_calls"
        case .toolStarted: "tool_started"
        case .toolFinished: "tool_finished"
        case .approvalRequested: "approval_requested"
        case .approvalAnswered: "approval_answered"
        case .committed: "committed"
        }
    }

    private enum CodingKeys: String, CodingKey {
        case type, pass, attempt, inputDigest = "input_digest", items, calls, callID = "call_id", idempotencyKey = "idempotency_key"
        case result, request, digest, approvalID = "approval_id", decision, settings
    }

    /// Encodes the entry with its kind as `type`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .type)
        switch self {
        case .turnStarted(let settings):
            try container.encode(settings, forKey: .settings)
        case .modelRequest(let pass, let attempt, let digest):
            try container.encode(pass, forKey: .pass)
            try container.encode(attempt, forKey: .attempt)
            try container.encode(digest, forKey: .inputDigest)
        case .toolCalls(let pass, let items, let calls):
            try container.encode(pass, forKey: .pass)
            try container.encode(items, forKey: .items)
            try container.encode(calls, forKey: .calls)
        case .toolStarted(let id, let key):
            try container.encode(id, forKey: .callID)
            try container.encode(key, forKey: .idempotencyKey)
        case .toolFinished(let result):
            try container.encode(result, forKey: .result)
        case .approvalRequested(let request, let digest):
            try container.encode(request, forKey: .request)
            try container.encode(digest, forKey: .digest)
        case .approvalAnswered(let id, let decision):
            try container.encode(id, forKey: .approvalID)
            try container.encode(decision, forKey: .decision)
        case .committed:
            break
        }
    }

    /// Decodes an entry; an unknown `type` is a decoding error (a journal is never guessed at).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .type) {
        case "turn_started":
            self = .turnStarted(try container.decode(TurnJournalSettings.self, forKey: .settings))
        case "model_request":
            self = .modelRequest(
                pass: try container.decode(Int.self, forKey: .pass), attempt: try container.decode(Int.self, forKey: .attempt),
                inputDigest: try container.decode(String.self, forKey: .inputDigest)
            )
        case "tool_calls":
            self = .toolCalls(
                pass: try container.decode(Int.self, forKey: .pass), items: try container.decode([AgentHistoryItem].self, forKey: .items),
                calls: try container.decode([ToolInvocation].self, forKey: .calls)
            )
        case "tool_started":
            self = .toolStarted(try container.decode(ToolInvocationID.self, forKey: .callID), idempotencyKey: try container.decode(String.self, forKey: .idempotencyKey))
        case "tool_finished":
            self = .toolFinished(try container.decode(ToolResultEnvelope.self, forKey: .result))
        case "approval_requested":
            self = .approvalRequested(try container.decode(AgentApprovalRequest.self, forKey: .request), digest: try container.decode(String.self, forKey: .digest))
        case "approval_answered":
            self = .approvalAnswered(try container.decode(AgentApprovalID.self, forKey: .approvalID), try container.decode(AgentApprovalDecision.self, forKey: .decision))
        case "committed":
            self = .committed
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "unknown journal entry type \(other)")
        }
    }

    /// The entry as stored: canonical-order JSON (sorted keys), dates as seconds since 2001.
    public func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(self))
    }

    /// An entry as ``encoded()`` wrote it.
    public static func decode(_ bytes: [UInt8]) throws -> TurnJournalEntry {
        try StoredDate.decoder().decode(TurnJournalEntry.self, from: Data(bytes))
    }
}
