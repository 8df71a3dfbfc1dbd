public import Foundation

/// One model's prices from a date on: an entry of ``AgentPriceTable``. Prices are per million tokens,
/// as `Decimal` (no binary floating point anywhere in a cost).
///
/// How counts are priced, following how the provider reports them: cached input tokens are a part of
/// the input tokens, and reasoning tokens a part of the output tokens. So
///
/// ```
/// cost = (input − cached) × input price + cached × cached-input price
///      + (output − reasoning) × output price + reasoning × reasoning-output price
/// ```
///
/// all divided by 1,000,000. With the default prices (cached input at the input price, reasoning at the
/// output price) this is `input × input price + output × output price`, and the cached or reasoning
/// count is not needed. Cache-write input tokens are input tokens and cost the input price.
public struct AgentModelPrice: Sendable, Hashable {
    /// The model, as requests name it (exact text).
    public var model: String
    /// The first moment these prices apply (inclusive).
    public var effectiveFrom: Date
    /// The currency of the prices (default `USD`).
    public var currency: String
    /// The price of a million input tokens not served from cache.
    public var input: Decimal
    /// The price of a million cached input tokens, when it differs from ``input``.
    public var cachedInput: Decimal?
    /// The price of a million output tokens.
    public var output: Decimal
    /// The price of a million reasoning output tokens, when it differs from ``output``.
    public var reasoningOutput: Decimal?

    /// Creates an entry.
    /// - Parameters:
    ///   - model: The model, as requests name it.
    ///   - effectiveFrom: The first moment the prices apply.
    ///   - currency: The currency (default `USD`).
    ///   - input: The price of a million input tokens.
    ///   - cachedInput: The price of a million cached input tokens (`nil`: the input price).
    ///   - output: The price of a million output tokens.
    ///   - reasoningOutput: The price of a million reasoning tokens (`nil`: the output price).
    public init(
        model: String, effectiveFrom: Date, currency: String = "USD", input: Decimal, cachedInput: Decimal? = nil, output: Decimal,
        reasoningOutput: Decimal? = nil
    ) {
        self.model = model
        self.effectiveFrom = effectiveFrom
        self.currency = currency
        self.input = input
        self.cachedInput = cachedInput
        self.output = output
        self.reasoningOutput = reasoningOutput
    }

    /// The price of a million cached input tokens: ``cachedInput``, else ``input``.
    public var effectiveCachedInput: Decimal { cachedInput ?? input }

    /// The price of a million reasoning tokens: ``reasoningOutput``, else ``output``.
    public var effectiveReasoningOutput: Decimal { reasoningOutput ?? output }

    /// What `usage` costs at these prices (see the type's discussion for the formula).
    /// - Returns: The cost in ``currency``; `nil` when a count the price needs is unknown (input and
    ///   output always; cached input only when its price differs from the input price; reasoning only
    ///   when its price differs from the output price), or when the counts contradict each other (a
    ///   negative count, more cached than input tokens, more reasoning than output tokens).
    public func cost(of usage: AgentUsage) -> Decimal? {
        guard let input = usage.inputTokens, let output = usage.outputTokens, input >= 0, output >= 0 else { return nil }
        let cached: Int
        if let count = usage.cachedInputTokens {
            guard (0...input).contains(count) else { return nil }
            cached = count
        } else {
            guard effectiveCachedInput == self.input else { return nil }
            cached = 0
        }
        let reasoning: Int
        if let count = usage.reasoningOutputTokens {
            guard (0...output).contains(count) else { return nil }
            reasoning = count
        } else {
            guard effectiveReasoningOutput == self.output else { return nil }
            reasoning = 0
        }
        let perMillion = Decimal(input - cached) * self.input + Decimal(cached) * effectiveCachedInput
            + Decimal(output - reasoning) * self.output + Decimal(reasoning) * effectiveReasoningOutput
        return perMillion / 1_000_000
    }
}
