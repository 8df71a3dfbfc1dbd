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
        var accumulator = Accumulator(by: grouping, prices: prices)
        for record in records { accumulator.add(record) }
        self = accumulator.summary
    }
}

extension AgentUsageSummary {
    /// A summary built one record at a time, for records read as a stream
    /// (``UsageRecording/forEachUsageRecord(matching:_:)``): it holds the groups' totals, not the records.
    ///
    /// ```swift
    /// var accumulator = AgentUsageSummary.Accumulator(by: .model)
    /// for record in records { accumulator.add(record) }
    /// let summary = accumulator.summary
    /// ```
    public struct Accumulator: Sendable, Hashable {
        private var byKey: [String?: AgentUsageTotals] = [:]
        private var overall: AgentUsageTotals
        private let grouping: AgentUsageGrouping
        private let prices: AgentPriceTable?

        /// An empty accumulator grouping by `grouping`, costing with `prices` when given.
        public init(by grouping: AgentUsageGrouping, prices: AgentPriceTable? = nil) {
            self.grouping = grouping
            self.prices = prices
            overall = AgentUsageTotals(priced: prices != nil)
        }

        /// Adds one record to its group and to the overall totals.
        public mutating func add(_ record: AgentUsageRecord) {
            byKey[grouping.key(of: record), default: AgentUsageTotals(priced: prices != nil)].add(record, prices: prices)
            overall.add(record, prices: prices)
        }

        /// The summary of the records added so far: the same as ``AgentUsageSummary/init(_:by:prices:)``
        /// over them.
        public var summary: AgentUsageSummary {
            let groups = byKey.map { Group(key: $0.key, totals: $0.value) }.sorted { lhs, rhs in
                switch (lhs.key, rhs.key) {
                case (nil, _): false
                case (_, nil): true
                case (let left?, let right?): Array(left.utf8).lexicographicallyPrecedes(Array(right.utf8))
                }
            }
            return AgentUsageSummary(grouping: grouping, groups: groups, overall: overall)
        }
    }

    /// A summary made of its parts.
    private init(grouping: AgentUsageGrouping, groups: [Group], overall: AgentUsageTotals) {
        self.grouping = grouping
        self.groups = groups
        self.overall = overall
    }
}
