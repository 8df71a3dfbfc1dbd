public import Foundation

/// Model prices by date, to cost the usage ledger: entries of ``AgentModelPrice``, each applying to
/// one model from its ``AgentModelPrice/effectiveFrom`` date until a later entry of the same model
/// takes over. Versioned by date, so old turns keep the price they were made at.
///
/// ```swift
/// let prices = try AgentPriceTable(json: Array(try Data(contentsOf: url)))
/// let cost = prices.cost(of: record)            // Decimal?, in prices.price(for:at:)?.currency
/// let summary = AgentUsageSummary(records, by: .model, prices: prices)
/// ```
///
/// The file form is JSON (see ``init(json:)``); the `Codable` form is the same document, with prices
/// written as decimal strings so that they read back exactly.
public struct AgentPriceTable: Sendable, Hashable {
    /// The entries, in the order given.
    public var entries: [AgentModelPrice]

    /// Creates a table.
    public init(entries: [AgentModelPrice]) {
        self.entries = entries
    }

    /// The prices that applied to `model` at `date`: of the entries for that model (exact text) whose
    /// ``AgentModelPrice/effectiveFrom`` is at or before `date`, the one with the latest date (the last
    /// of equal dates in ``entries``). `nil` when none applies.
    public func price(for model: String, at date: Date) -> AgentModelPrice? {
        var found: AgentModelPrice?
        for entry in entries where entry.model == model && entry.effectiveFrom <= date {
            if let current = found, current.effectiveFrom > entry.effectiveFrom { continue }
            found = entry
        }
        return found
    }

    /// What `record` cost at the prices of its model on its ``AgentUsageRecord/recordedAt`` date (see
    /// ``AgentModelPrice/cost(of:)`` for the formula), in that entry's currency.
    /// - Returns: The cost; `nil` when no price applies or a count the price needs is unknown.
    public func cost(of record: AgentUsageRecord) -> Decimal? {
        price(for: record.model, at: record.recordedAt)?.cost(of: record.usage)
    }
}
