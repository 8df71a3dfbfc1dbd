public import Foundation

/// One model response's token usage, as recorded in the state store's usage ledger
/// (``UsageRecording``).
///
/// A turn may send several model requests (a tool call and the answer after it, a retry); each
/// completed one is a record, numbered by ``sequence`` within its turn. `(turnID, sequence)` is the
/// record's identity: recording it again replaces it.
///
/// ```swift
/// let record = AgentUsageRecord(
///     threadID: thread.id, turnID: turn.id, sequence: 0, accountBinding: thread.accountBinding,
///     model: "gpt-6-astra", recordedAt: Date(), usage: AgentUsage(inputTokens: 1_200, cachedInputTokens: 1_024, outputTokens: 80)
/// )
/// try await store.recordUsage([record])
/// ```
public struct AgentUsageRecord: Sendable, Hashable, Codable {
    /// The thread the turn ran in.
    public var threadID: AgentThreadID
    /// The turn the request belonged to.
    public var turnID: AgentTurnID
    /// The model request's number within the turn (0-based); with ``turnID``, the record's identity.
    public var sequence: Int
    /// The account binding the thread runs under (``AgentThread/accountBinding``), `nil` when unknown.
    public var accountBinding: String?
    /// The model that answered, as the request named it.
    public var model: String
    /// When the response completed.
    public var recordedAt: Date
    /// The counts the provider reported; unknown counts stay `nil`, never zero.
    public var usage: AgentUsage

    /// Creates a record.
    /// - Parameters:
    ///   - threadID: The thread the turn ran in.
    ///   - turnID: The turn the request belonged to.
    ///   - sequence: The request's number within the turn (0-based).
    ///   - accountBinding: The thread's account binding, `nil` when unknown.
    ///   - model: The model that answered.
    ///   - recordedAt: When the response completed.
    ///   - usage: The reported token counts.
    public init(
        threadID: AgentThreadID, turnID: AgentTurnID, sequence: Int, accountBinding: String? = nil, model: String, recordedAt: Date, usage: AgentUsage
    ) {
        self.threadID = threadID
        self.turnID = turnID
        self.sequence = sequence
        self.accountBinding = accountBinding
        self.model = model
        self.recordedAt = recordedAt
        self.usage = usage
    }

    /// The order the ledger lists records in: by ``recordedAt``, then ``turnID``, then ``sequence``.
    public static func ledgerOrder(_ lhs: AgentUsageRecord, _ rhs: AgentUsageRecord) -> Bool {
        if lhs.recordedAt != rhs.recordedAt { return lhs.recordedAt < rhs.recordedAt }
        if lhs.turnID != rhs.turnID { return lhs.turnID < rhs.turnID }
        return lhs.sequence < rhs.sequence
    }
}
