public import Foundation

/// Which usage records to read from the ledger (``UsageRecording/usageRecords(matching:)``): every
/// condition that is not `nil` must hold; the default query matches every record.
///
/// ```swift
/// let december = AgentUsageQuery(model: "gpt-6-astra", since: start, until: end)
/// let records = try await store.usageRecords(matching: december)
/// ```
public struct AgentUsageQuery: Sendable, Hashable {
    /// Only the records of this thread.
    public var threadID: AgentThreadID?
    /// Only the records of this turn.
    public var turnID: AgentTurnID?
    /// Only the records under this account binding (records without one never match a binding).
    public var accountBinding: String?
    /// Only the records of this model (exact text).
    public var model: String?
    /// Only the records recorded at or after this date (inclusive).
    public var since: Date?
    /// Only the records recorded before this date (exclusive).
    public var until: Date?

    /// Creates a query; each `nil` condition matches everything.
    public init(
        threadID: AgentThreadID? = nil, turnID: AgentTurnID? = nil, accountBinding: String? = nil, model: String? = nil, since: Date? = nil,
        until: Date? = nil
    ) {
        self.threadID = threadID
        self.turnID = turnID
        self.accountBinding = accountBinding
        self.model = model
        self.since = since
        self.until = until
    }

    /// Whether `record` meets every condition of the query.
    public func matches(_ record: AgentUsageRecord) -> Bool {
        if let threadID, record.threadID != threadID { return false }
        if let turnID, record.turnID != turnID { return false }
        if let accountBinding, record.accountBinding != accountBinding { return false }
        if let model, record.model != model { return false }
        if let since, record.recordedAt < since { return false }
        if let until, record.recordedAt >= until { return false }
        return true
    }
}
