import Foundation

/// Usage records summed by group (thread, turn, account, model or UTC day) and overall, with costs
/// when a price table is given. Pure: it reads nothing and writes nothing.
///
/// ```swift
/// let records = try await store.usageRecords(matching: AgentUsageQuery(since: monthStart))
/// let summary = AgentUsageSummary(records, by: .model, prices: try AgentPriceTable(json: bytes))
/// for group in summary.groups {
///     print(group.key ?? "-", group.totals.inputTokens.known, group.totals.cost?.amounts["USD"] ?? 0)
/// }
/// ```
///
/// Unknown counts are never shown as zero silently: each ``AgentTokenTally`` says how many records did
/// not report its kind, and ``AgentUsageCost/uncostedCount`` how many records have no cost.
public struct AgentUsageSummary: Sendable, Hashable {
    /// One group: its key and its totals.
    public struct Group: Sendable, Hashable {
        /// The group's key (see ``AgentUsageGrouping/key(of:)``): `nil` only for the records without an
        /// account binding when grouped by account.
        public var key: String?
        /// The group's totals.
        public var totals: AgentUsageTotals

        /// Creates a group.
        public init(key: String?, totals: AgentUsageTotals) {
            self.key = key
            self.totals = totals
        }
    }

    /// How the records were grouped.
    public var grouping: AgentUsageGrouping
    /// The groups, ordered by key (byte order of the key's UTF-8; the group without a key last).
    public var groups: [Group]
    /// The totals of every record.
    public var overall: AgentUsageTotals

    /// Sums `records` by `grouping`; with `prices`, costs them too.
    /// - Parameters:
    ///   - records: The records, in any order.
    ///   - grouping: How to group them.
    ///   - prices: The prices to cost them by; `nil` leaves every ``AgentUsageTotals/cost`` `nil`.
    public init(_ records: some Sequence<AgentUsageRecord>, by grouping: AgentUsageGrouping, prices: AgentPriceTable? = nil) {
        var byKey: [String?: AgentUsageTotals] = [:]
        var overall = AgentUsageTotals(priced: prices != nil)
        for record in records {
            let key = grouping.key(of: record)
            byKey[key, default: AgentUsageTotals(priced: prices != nil)].add(record, prices: prices)
            overall.add(record, prices: prices)
        }
        self.grouping = grouping
        self.overall = overall
        groups = byKey.map { Group(key: $0.key, totals: $0.value) }.sorted { lhs, rhs in
            switch (lhs.key, rhs.key) {
            case (nil, _): false
            case (_, nil): true
            case (let left?, let right?): Array(left.utf8).lexicographicallyPrecedes(Array(right.utf8))
            }
        }
    }
}
