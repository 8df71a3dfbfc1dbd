/// Which memories a turn's instructions carried: stored with the turn's `turn_completed` history event
/// and returned in its ``AgentTurnSummary``, so a host can tell afterwards exactly what the model saw.
public struct AgentMemoryApplication: Sendable, Hashable, Codable {
    /// Why no memory was applied.
    public struct Reason: OpenVocabulary, ExpressibleByStringLiteral {
        /// The reason's stable code.
        public let rawValue: String
        /// Creates a reason.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Creates a reason from a literal.
        public init(stringLiteral value: String) { rawValue = value }
        /// The request's ``MemorySelection`` was `.disable`.
        public static let disabledByRequest: Reason = "disabled_by_request"
        /// The search found nothing within its filters.
        public static let noMatches: Reason = "no_matches"
        /// The store failed or refused the query; the turn ran without memory.
        public static let retrievalFailed: Reason = "retrieval_failed"
    }

    /// The namespace searched.
    public var namespace: MemoryNamespace
    /// The records injected, in the order the instructions list them; empty when none was applied.
    public var memoryIDs: [MemoryRecordID]
    /// Where they went; `nil` when none was applied.
    public var placement: MemoryInstructionPlacement?
    /// The SHA-256 of the turn's compiled instructions as sent (UTF-8, lowercase hex; the digest of the
    /// empty string when the turn sent none).
    public var instructionsSHA256: String
    /// Why none was applied; `nil` when some were.
    public var notAppliedReason: Reason?

    /// Creates an application record.
    public init(
        namespace: MemoryNamespace, memoryIDs: [MemoryRecordID], placement: MemoryInstructionPlacement?, instructionsSHA256: String,
        notAppliedReason: Reason? = nil
    ) {
        self.namespace = namespace
        self.memoryIDs = memoryIDs
        self.placement = placement
        self.instructionsSHA256 = instructionsSHA256
        self.notAppliedReason = notAppliedReason
    }

    /// Whether any memory was injected.
    public var isApplied: Bool { !memoryIDs.isEmpty }

    /// The lowercase hex SHA-256 of `instructions` (`nil` hashes as the empty string).
    public static func digest(ofInstructions instructions: String?) -> String {
        SHA256.hexDigest(of: Array((instructions ?? "").utf8))
    }
}
