public import Foundation

/// A search of one namespace: optional text, scope and tag filters, a ranking profile and a read budget.
///
/// ```swift
/// let query = MemoryQuery(
///     namespace: "shop", text: "delivery tuesday", match: .atLeast(1),
///     scopes: [.user], budget: MemoryReadBudget(records: 4, characters: 800)
/// )
/// let result = try await store.search(query)
/// for hit in result.hits { print(hit.record.summary, hit.explanation.matchedTokens) }
/// ```
///
/// The text is split into tokens (runs of letters and digits, lowercased, duplicates dropped); it is
/// never interpreted as query syntax.
public struct MemoryQuery: Sendable, Hashable {
    /// How many of the text's tokens a record must contain.
    public enum MatchPolicy: Sendable, Hashable {
        /// At least one token.
        case anyToken
        /// At least `n` distinct tokens (`n` at least 1; more than the text has means all of them).
        case atLeast(Int)
        /// Every token.
        case allTokens
    }

    /// The order of the results.
    public enum Ranking: String, Sendable, Hashable, CaseIterable {
        /// Higher importance first, then text relevance (when there is text), then the most recently
        /// updated.
        case importanceThenRecency = "importance_then_recency"
        /// The most recently updated first, then higher importance, then text relevance.
        case recencyThenImportance = "recency_then_importance"
    }

    /// The namespace searched.
    public var namespace: MemoryNamespace
    /// The text to match; `nil` or text without tokens matches every record.
    public var text: String?
    /// How many tokens must match.
    public var match: MatchPolicy
    /// Only records in one of these scopes; empty for any scope.
    public var scopes: [MemoryScope]
    /// Only records with at least one of these tags; empty for any.
    public var tags: [String]
    /// Whether archived records are returned.
    public var includeArchived: Bool
    /// Whether expired records are returned.
    public var includeExpired: Bool
    /// The order of the results.
    public var ranking: Ranking
    /// How much the results may hold.
    public var budget: MemoryReadBudget
    /// How many ranked records are considered before the budget (1 to ``MemoryLimits/resultCount``).
    public var limit: Int
    /// The time expiry is judged at.
    public var asOf: Date

    /// The default number of records considered.
    public static let defaultLimit = 64

    /// Creates a query.
    public init(
        namespace: MemoryNamespace = .default, text: String? = nil, match: MatchPolicy = .anyToken, scopes: [MemoryScope] = [],
        tags: [String] = [], includeArchived: Bool = false, includeExpired: Bool = false, ranking: Ranking = .importanceThenRecency,
        budget: MemoryReadBudget = .default, limit: Int = MemoryQuery.defaultLimit, asOf: Date = Date()
    ) {
        self.namespace = namespace
        self.text = text
        self.match = match
        self.scopes = scopes
        self.tags = tags
        self.includeArchived = includeArchived
        self.includeExpired = includeExpired
        self.ranking = ranking
        self.budget = budget
        self.limit = limit
        self.asOf = asOf
    }

    /// The text's tokens, as every store matches them.
    public var tokens: [String] { MemoryText.tokens(text ?? "") }

    /// How many distinct tokens a record must contain (0 without tokens).
    public var requiredMatches: Int {
        let count = tokens.count
        guard count > 0 else { return 0 }
        switch match {
        case .anyToken: return 1
        case .allTokens: return count
        case .atLeast(let n): return min(max(n, 1), count)
        }
    }

    /// Checks the limits.
    /// - Throws: ``MemoryStoreError`` `memory_query_invalid` naming the limit (never the text).
    public func validate() throws(MemoryStoreError) {
        guard (1...MemoryLimits.resultCount).contains(limit) else {
            throw .invalidQuery(.resultCount, "the limit is \(limit); it must be 1 to \(MemoryLimits.resultCount)")
        }
        if case .atLeast(let n) = match, n < 1 { throw .invalidQuery(.matchCount, "at least \(n) tokens: the count must be 1 or more") }
        guard budget.records > 0, budget.characters > 0 else {
            throw .invalidQuery(.budget, "the read budget is \(budget.records) records and \(budget.characters) characters; both must be positive")
        }
        let count = MemoryText.tokenCount(text ?? "", stoppingAfter: MemoryLimits.queryTokens)
        guard count <= MemoryLimits.queryTokens else {
            throw .invalidQuery(.queryTokens, "the text has more than \(MemoryLimits.queryTokens) distinct tokens")
        }
    }
}

/// How much one search may return: at most `records` records whose summaries hold at most `characters`
/// characters together (Swift `Character`s).
public struct MemoryReadBudget: Sendable, Hashable {
    /// The most records.
    public var records: Int
    /// The most summary characters, all records together.
    public var characters: Int

    /// Creates a budget.
    public init(records: Int = 8, characters: Int = 1_600) {
        self.records = records
        self.characters = characters
    }

    /// 8 records and 1,600 characters.
    public static let `default` = MemoryReadBudget()
}

/// What ``MemoryStoring/list(_:)`` returns: the records of a namespace, most recently updated first.
public struct MemoryListQuery: Sendable, Hashable {
    /// The namespace listed.
    public var namespace: MemoryNamespace
    /// Only records in one of these scopes; empty for any.
    public var scopes: [MemoryScope]
    /// Only records with at least one of these tags; empty for any.
    public var tags: [String]
    /// Whether archived records are listed.
    public var includeArchived: Bool
    /// Whether expired records are listed.
    public var includeExpired: Bool
    /// The most records (1 to ``MemoryLimits/listCount``).
    public var limit: Int
    /// The time expiry is judged at.
    public var asOf: Date

    /// Creates a list query.
    public init(
        namespace: MemoryNamespace = .default, scopes: [MemoryScope] = [], tags: [String] = [], includeArchived: Bool = false,
        includeExpired: Bool = false, limit: Int = 100, asOf: Date = Date()
    ) {
        self.namespace = namespace
        self.scopes = scopes
        self.tags = tags
        self.includeArchived = includeArchived
        self.includeExpired = includeExpired
        self.limit = limit
        self.asOf = asOf
    }

    /// Checks the limit.
    /// - Throws: ``MemoryStoreError`` `memory_query_invalid` (`list_count`).
    public func validate() throws(MemoryStoreError) {
        guard (1...MemoryLimits.listCount).contains(limit) else {
            throw .invalidQuery(.listCount, "the limit is \(limit); it must be 1 to \(MemoryLimits.listCount)")
        }
    }
}
