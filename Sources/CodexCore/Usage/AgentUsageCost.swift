public import Foundation

/// What a group of usage records cost by a price table (``AgentPriceTable``): the summed amounts, one
/// per currency, and how many records could not be priced (no price for their model and date, or a
/// count the price needs was not reported), so a partial sum never passes for the whole.
public struct AgentUsageCost: Sendable, Hashable {
    /// The summed cost of the priced records, by currency code (`USD`).
    public var amounts: [String: Decimal]
    /// How many records have no cost.
    public var uncostedCount: Int

    /// Creates a cost.
    public init(amounts: [String: Decimal] = [:], uncostedCount: Int = 0) {
        self.amounts = amounts
        self.uncostedCount = uncostedCount
    }

    /// Whether every record was priced.
    public var isComplete: Bool { uncostedCount == 0 }

    /// Adds one record's cost in `currency`.
    public mutating func add(_ cost: Decimal, currency: String) {
        amounts[currency, default: 0] += cost
    }
}
