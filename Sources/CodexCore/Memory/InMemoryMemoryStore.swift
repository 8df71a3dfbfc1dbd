public import Foundation

/// A ``MemoryStoring`` store in the process's memory, for tests, previews and short-lived hosts. It
/// validates, dedupes, filters, ranks (with the same BM25 formula as SQLite's FTS5) and budgets as the
/// SQLite store does; nothing survives the process.
///
/// ```swift
/// let store = InMemoryMemoryStore()
/// try await store.upsert(MemoryRecord(summary: "The build uses Swift 6.", tags: ["build"]))
/// let result = try await store.search(MemoryQuery(text: "swift build", match: .allTokens))
/// ```
public actor InMemoryMemoryStore: MemoryStoring {
    /// A stored record and its term frequencies.
    private struct Entry {
        var record: MemoryRecord
        var frequencies: [String: Int]
        var length: Int

        init(_ record: MemoryRecord) {
            self.record = record
            let tokens = MemoryText.allTokens(MemorySearchAssembly.searchableText(of: record))
            frequencies = tokens.reduce(into: [:]) { $0[$1, default: 0] += 1 }
            // One token more: the SQLite store's full-text row also holds the record's importance level
            // (one token, weighted 0), which FTS5 counts in the row's length; so both stores score alike.
            length = tokens.count + 1
        }
    }

    private var entries: [MemoryRecordID: Entry] = [:]

    /// An empty store.
    public init() {}

    /// See ``MemoryStoring/upsert(_:)``.
    @discardableResult
    public func upsert(_ record: MemoryRecord) throws(MemoryStoreError) -> MemoryUpsertOutcome {
        try record.validate()
        let byID = entries[record.id]?.record
        let byKey = record.dedupeKey.flatMap { key in
            entries.values.first { $0.record.namespace == record.namespace && $0.record.dedupeKey == key }?.record
        }
        if let byID, let byKey, byID.id != byKey.id {
            throw MemoryStoreError(code: .dedupeConflict, message: "the ID and the dedupe key name two different records")
        }
        guard let previous = byID ?? byKey else {
            entries[record.id] = Entry(record)
            return .inserted(record)
        }
        let stored = record.replacing(previous)
        entries[stored.id] = Entry(stored)
        return .replaced(previous: previous, stored: stored)
    }

    /// See ``MemoryStoring/record(_:)``.
    public func record(_ id: MemoryRecordID) -> MemoryRecord? { entries[id]?.record }

    /// See ``MemoryStoring/delete(_:)``.
    @discardableResult
    public func delete(_ id: MemoryRecordID) -> Bool { entries.removeValue(forKey: id) != nil }

    /// See ``MemoryStoring/archive(_:at:)``.
    @discardableResult
    public func archive(_ id: MemoryRecordID, at date: Date) -> Bool {
        guard let entry = entries[id] else { return false }
        entries[id] = Entry(entry.record.archived(at: date))
        return true
    }

    /// See ``MemoryStoring/list(_:)``.
    public func list(_ query: MemoryListQuery) throws(MemoryStoreError) -> [MemoryRecord] {
        try query.validate()
        let matching = entries.values.map(\.record).filter { record in
            Self.passes(record, namespace: query.namespace, scopes: query.scopes, tags: query.tags,
                        includeArchived: query.includeArchived, includeExpired: query.includeExpired, asOf: query.asOf)
        }
        let sorted = matching.sorted { $0.updatedAt != $1.updatedAt ? $0.updatedAt > $1.updatedAt : $0.id.rawValue < $1.id.rawValue }
        return Array(sorted.prefix(query.limit))
    }

    /// See ``MemoryStoring/search(_:)``.
    public func search(_ query: MemoryQuery) throws(MemoryStoreError) -> MemorySearchResult {
        try query.validate()
        let tokens = query.tokens
        let required = query.requiredMatches
        let scorer = tokens.isEmpty ? nil : BM25(tokens: tokens, entries: Array(entries.values))
        var candidates: [MemorySearchAssembly.Candidate] = []
        for entry in entries.values {
            let record = entry.record
            guard Self.passes(record, namespace: query.namespace, scopes: query.scopes, tags: query.tags,
                              includeArchived: query.includeArchived, includeExpired: query.includeExpired, asOf: query.asOf) else { continue }
            var relevance: Double?
            if let scorer {
                guard tokens.count(where: { entry.frequencies[$0] != nil }) >= required else { continue }
                relevance = scorer.score(entry.frequencies, length: entry.length)
            }
            candidates.append(MemorySearchAssembly.Candidate(
                id: record.id, importance: record.importance, updatedAt: record.updatedAt.timeIntervalSinceReferenceDate,
                relevance: relevance, summaryCharacters: record.summary.count
            ))
        }
        let ranked = Array(candidates.sorted { MemorySearchAssembly.precedes($0, $1, query.ranking) }.prefix(query.limit))
        let (chosen, omitted) = MemorySearchAssembly.withinBudget(ranked, query.budget)
        let hits = chosen.compactMap { candidate, rank -> MemoryHit? in
            guard let record = entries[candidate.id]?.record else { return nil }
            return MemoryHit(
                record: record,
                explanation: MemorySearchAssembly.explanation(record, query: query, tokens: tokens, rank: rank, relevance: candidate.relevance)
            )
        }
        return MemorySearchResult(hits: hits, candidates: ranked.count, omittedByBudget: omitted)
    }

    /// Whether `record` passes a query's filters.
    private static func passes(
        _ record: MemoryRecord, namespace: MemoryNamespace, scopes: [MemoryScope], tags: [String], includeArchived: Bool, includeExpired: Bool, asOf: Date
    ) -> Bool {
        guard record.namespace == namespace else { return false }
        if !includeArchived, record.isArchived { return false }
        if !includeExpired, record.isExpired(at: asOf) { return false }
        if !scopes.isEmpty, !scopes.contains(record.scope) { return false }
        if !tags.isEmpty, !tags.contains(where: record.tags.contains) { return false }
        return true
    }

    /// FTS5's BM25 (k1 = 1.2, b = 0.75, every column weight 1) over every stored record, with the sign
    /// turned so that higher is better.
    private struct BM25 {
        let tokens: [String]
        let idf: [Double]
        let averageLength: Double

        init(tokens: [String], entries: [Entry]) {
            self.tokens = tokens
            let rows = Double(entries.count)
            let total = entries.reduce(0) { $0 + $1.length }
            averageLength = rows > 0 ? Double(total) / rows : 1
            idf = tokens.map { token in
                let hits = Double(entries.count { $0.frequencies[token] != nil })
                let value = log((rows - hits + 0.5) / (hits + 0.5))
                return value <= 0 ? 1e-6 : value
            }
        }

        func score(_ frequencies: [String: Int], length: Int) -> Double {
            let k1 = 1.2
            let b = 0.75
            var score = 0.0
            for (index, token) in tokens.enumerated() {
                let frequency = Double(frequencies[token] ?? 0)
                score += idf[index] * (frequency * (k1 + 1)) / (frequency + k1 * (1 - b + b * Double(length) / max(averageLength, 1e-9)))
            }
            return score
        }
    }
}
