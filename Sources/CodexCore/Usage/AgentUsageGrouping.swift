/// How ``AgentUsageSummary`` groups usage records: by thread, turn, account binding, model, or UTC day.
///
/// A struct with static members rather than an enum, so that groupings can be added without breaking
/// a host's `switch`.
///
/// ```swift
/// let byDay = AgentUsageSummary(records, by: .day)
/// let grouping = AgentUsageGrouping(name: "model")   // .model
/// ```
public struct AgentUsageGrouping: Sendable, Hashable, CustomStringConvertible {
    enum Kind: String, Sendable, Hashable, CaseIterable {
        case thread, turn, account, model, day
    }

    let kind: Kind

    /// One group per thread; the key is the thread ID.
    public static let thread = AgentUsageGrouping(kind: .thread)
    /// One group per turn; the key is the turn ID.
    public static let turn = AgentUsageGrouping(kind: .turn)
    /// One group per account binding; the key is the binding, `nil` for records without one.
    public static let account = AgentUsageGrouping(kind: .account)
    /// One group per model; the key is the model as recorded.
    public static let model = AgentUsageGrouping(kind: .model)
    /// One group per UTC day of ``AgentUsageRecord/recordedAt``; the key is the day (`2026-12-01`).
    public static let day = AgentUsageGrouping(kind: .day)

    /// Every grouping, in the order above.
    public static let all: [AgentUsageGrouping] = Kind.allCases.map(AgentUsageGrouping.init(kind:))

    /// The grouping's name: `thread`, `turn`, `account`, `model` or `day`.
    public var name: String { kind.rawValue }

    /// The grouping's name.
    public var description: String { name }

    /// The grouping of that name (see ``name``), or `nil`.
    public init?(name: String) {
        guard let kind = Kind(rawValue: name) else { return nil }
        self.kind = kind
    }

    init(kind: Kind) { self.kind = kind }

    /// The key of `record`'s group (`nil` only for ``account`` and a record without a binding).
    public func key(of record: AgentUsageRecord) -> String? {
        switch kind {
        case .thread: record.threadID.rawValue
        case .turn: record.turnID.rawValue
        case .account: record.accountBinding
        case .model: record.model
        case .day: ISO8601Instant.day(of: record.recordedAt)
        }
    }
}
