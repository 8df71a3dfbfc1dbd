import Foundation

/// The summed usage of a group of records: how many model requests, each kind of token count (known
/// sum and unknown count, see ``AgentTokenTally``), and the cost when a price table was given.
///
/// Cached and cache-write input tokens are part of the input tokens, and reasoning tokens part of the
/// output tokens, as the provider reports them; ``totalTokens`` sums each record's
/// ``AgentUsage/derivedTotalTokens`` (the reported total, else input plus output).
public struct AgentUsageTotals: Sendable, Hashable {
    /// How many records (model requests).
    public var requestCount: Int
    /// Input tokens.
    public var inputTokens: AgentTokenTally
    /// Input tokens served from cache (a part of the input tokens).
    public var cachedInputTokens: AgentTokenTally
    /// Input tokens written to cache (a part of the input tokens).
    public var cacheWriteInputTokens: AgentTokenTally
    /// Output tokens.
    public var outputTokens: AgentTokenTally
    /// Output tokens spent on reasoning (a part of the output tokens).
    public var reasoningOutputTokens: AgentTokenTally
    /// Total tokens.
    public var totalTokens: AgentTokenTally
    /// The cost, when the totals were made with a price table; `nil` otherwise.
    public var cost: AgentUsageCost?

    /// Empty totals (with a cost to fill when `priced`).
    public init(priced: Bool = false) {
        requestCount = 0
        inputTokens = AgentTokenTally()
        cachedInputTokens = AgentTokenTally()
        cacheWriteInputTokens = AgentTokenTally()
        outputTokens = AgentTokenTally()
        reasoningOutputTokens = AgentTokenTally()
        totalTokens = AgentTokenTally()
        cost = priced ? AgentUsageCost() : nil
    }

    /// Adds one record; with `prices`, its cost too (``AgentPriceTable/price(for:at:)`` and
    /// ``AgentModelPrice/cost(of:)``).
    public mutating func add(_ record: AgentUsageRecord, prices: AgentPriceTable? = nil) {
        requestCount += 1
        let usage = record.usage
        inputTokens.add(usage.inputTokens)
        cachedInputTokens.add(usage.cachedInputTokens)
        cacheWriteInputTokens.add(usage.cacheWriteInputTokens)
        outputTokens.add(usage.outputTokens)
        reasoningOutputTokens.add(usage.reasoningOutputTokens)
        totalTokens.add(usage.derivedTotalTokens)
        guard let prices else { return }
        var cost = self.cost ?? AgentUsageCost()
        if let price = prices.price(for: record.model, at: record.recordedAt), let amount = price.cost(of: usage) {
            cost.add(amount, currency: price.currency)
        } else {
            cost.uncostedCount += 1
        }
        self.cost = cost
    }
}
