/// The steps of a search every store shares: the ranking order, the read budget and the explanation.
package enum MemorySearchAssembly {
    /// One ranked candidate: its sort keys and summary size.
    package struct Candidate: Sendable {
        package var id: MemoryRecordID
        package var importance: Int
        package var updatedAt: Double
        /// Higher is better; `nil` without text.
        package var relevance: Double?
        package var summaryCharacters: Int

        package init(id: MemoryRecordID, importance: Int, updatedAt: Double, relevance: Double?, summaryCharacters: Int) {
            self.id = id
            self.importance = importance
            self.updatedAt = updatedAt
            self.relevance = relevance
            self.summaryCharacters = summaryCharacters
        }
    }

    /// Whether `a` ranks before `b` under `ranking`.
    package static func precedes(_ a: Candidate, _ b: Candidate, _ ranking: MemoryQuery.Ranking) -> Bool {
        let relevanceA = a.relevance ?? 0
        let relevanceB = b.relevance ?? 0
        switch ranking {
        case .importanceThenRecency:
            if a.importance != b.importance { return a.importance > b.importance }
            if relevanceA != relevanceB { return relevanceA > relevanceB }
            if a.updatedAt != b.updatedAt { return a.updatedAt > b.updatedAt }
        case .recencyThenImportance:
            if a.updatedAt != b.updatedAt { return a.updatedAt > b.updatedAt }
            if a.importance != b.importance { return a.importance > b.importance }
            if relevanceA != relevanceB { return relevanceA > relevanceB }
        }
        return a.id.rawValue < b.id.rawValue
    }

    /// The candidates (already ranked) that fit `budget`, with their 1-based ranks: each in turn is
    /// taken when it fits what is left, and skipped otherwise, until the record count is reached.
    package static func withinBudget(_ ranked: [Candidate], _ budget: MemoryReadBudget) -> (chosen: [(Candidate, Int)], omitted: Int) {
        var chosen: [(Candidate, Int)] = []
        var characters = 0
        var omitted = 0
        for (index, candidate) in ranked.enumerated() {
            if chosen.count < budget.records, characters + candidate.summaryCharacters <= budget.characters {
                chosen.append((candidate, index + 1))
                characters += candidate.summaryCharacters
            } else {
                omitted += 1
            }
        }
        return (chosen, omitted)
    }

    /// Why `record` matched `query`.
    package static func explanation(_ record: MemoryRecord, query: MemoryQuery, tokens: [String], rank: Int, relevance: Double?) -> MemoryMatchExplanation {
        var matched: [String] = []
        if !tokens.isEmpty {
            let present = Set(MemoryText.allTokens(searchableText(of: record)))
            matched = tokens.filter(present.contains)
        }
        let tags = Set(record.tags)
        return MemoryMatchExplanation(
            matchedTokens: matched, matchedScope: query.scopes.isEmpty ? nil : record.scope,
            matchedTags: query.tags.filter(tags.contains), rank: rank, relevance: relevance
        )
    }

    /// The searched text of `record` as one string: the summary, then each evidence string.
    package static func searchableText(of record: MemoryRecord) -> String {
        ([record.summary] + record.evidence).joined(separator: "\n")
    }

    /// The evidence as the full-text index stores it (one column).
    package static func evidenceText(of record: MemoryRecord) -> String {
        record.evidence.joined(separator: "\n")
    }
}
