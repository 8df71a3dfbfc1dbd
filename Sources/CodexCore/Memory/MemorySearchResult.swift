/// What a search found: the hits within the read budget, best first.
public struct MemorySearchResult: Sendable, Hashable {
    /// The records returned, best first, with why each matched.
    public var hits: [MemoryHit]
    /// How many records matched and were ranked (at most the query's limit).
    public var candidates: Int
    /// Ranked records left out because they did not fit the read budget.
    public var omittedByBudget: Int

    /// Creates a result.
    public init(hits: [MemoryHit], candidates: Int, omittedByBudget: Int) {
        self.hits = hits
        self.candidates = candidates
        self.omittedByBudget = omittedByBudget
    }

    /// The returned records.
    public var records: [MemoryRecord] { hits.map(\.record) }
    /// The summary characters returned, all hits together.
    public var summaryCharacters: Int { hits.reduce(0) { $0 + $1.record.summary.count } }
}

/// One returned record and why it matched.
public struct MemoryHit: Sendable, Hashable {
    /// The record.
    public var record: MemoryRecord
    /// Why it matched.
    public var explanation: MemoryMatchExplanation

    /// Creates a hit.
    public init(record: MemoryRecord, explanation: MemoryMatchExplanation) {
        self.record = record
        self.explanation = explanation
    }
}

/// Why a record matched a query and where it ranked.
public struct MemoryMatchExplanation: Sendable, Hashable {
    /// The query's tokens found in the record's summary or evidence, in the query's order.
    public var matchedTokens: [String]
    /// The record's scope when the query named scopes (`nil` when it did not).
    public var matchedScope: MemoryScope?
    /// The query's tags the record has, in the query's order.
    public var matchedTags: [String]
    /// The record's position among the ranked candidates, from 1 (before the budget was applied).
    public var rank: Int
    /// The text relevance, BM25 with the sign turned so that higher is better; `nil` without text.
    public var relevance: Double?

    /// Creates an explanation.
    public init(matchedTokens: [String], matchedScope: MemoryScope?, matchedTags: [String], rank: Int, relevance: Double?) {
        self.matchedTokens = matchedTokens
        self.matchedScope = matchedScope
        self.matchedTags = matchedTags
        self.rank = rank
        self.relevance = relevance
    }
}
