public import CodexCore
import Foundation

extension SQLiteMemoryStore {
    /// See ``CodexCore/MemoryStoring/search(_:)``. One read transaction: the ranked candidates come from
    /// one statement (FTS5 `MATCH` with every token quoted, `bm25()` for relevance), then the records
    /// that fit the read budget are decoded.
    public func search(_ query: MemoryQuery) async throws(MemoryStoreError) -> MemorySearchResult {
        try query.validate()
        let plan = SQLiteMemorySearchPlan(query)
        return try await database.read { connection in
            let ranked = try plan.candidates(connection)
            let (chosen, omitted) = MemorySearchAssembly.withinBudget(ranked, query.budget)
            let hits = try chosen.map { candidate, rank in
                guard let (_, record) = try SQLiteMemoryRows.find(connection, id: candidate.id) else {
                    throw MemoryStoreError(code: .corrupt, message: "the full-text index names a record that is missing")
                }
                let explanation = MemorySearchAssembly.explanation(record, query: query, tokens: plan.tokens, rank: rank, relevance: candidate.relevance)
                return MemoryHit(record: record, explanation: explanation)
            }
            return MemorySearchResult(hits: hits, candidates: ranked.count, omittedByBudget: omitted)
        }
    }
}

/// The one statement that ranks a query's candidates: its SQL and bindings. User text only ever reaches
/// SQLite as bound values, and reaches FTS5 only as quoted tokens (``CodexCore/MemoryText/ftsQuery(_:all:)``).
struct SQLiteMemorySearchPlan {
    let sql: String
    let bindings: [SQLiteValue]
    let tokens: [String]

    init(_ query: MemoryQuery) {
        tokens = query.tokens
        let required = query.requiredMatches
        var filter = SQLiteMemoryFilter(namespace: query.namespace)
        filter.add(scopes: query.scopes, tags: query.tags, includeArchived: query.includeArchived, includeExpired: query.includeExpired, asOf: query.asOf)
        let from: String
        let relevance: String
        var leading: [SQLiteValue] = []
        if let match = MemoryText.ftsQuery(tokens, all: required == tokens.count && tokens.count > 1) {
            from = "memory_fts JOIN memory_records r ON r.key = memory_fts.rowid"
            relevance = "bm25(memory_fts)"
            leading = [.text(match)]
            if required > 1, required < tokens.count {
                // At least `required` of the tokens: one membership test per token, summed.
                let tests = tokens.map { _ in "(r.key IN (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?))" }
                filter.add("(" + tests.joined(separator: " + ") + ") >= ?", tokens.map { .text(MemoryText.quoted($0)) } + [.integer(Int64(required))])
            }
        } else {
            from = "memory_records r"
            relevance = "NULL"
        }
        let order = switch query.ranking {
        case .importanceThenRecency: "r.importance DESC, \(relevance), r.updated_at DESC, r.id"
        case .recencyThenImportance: "r.updated_at DESC, r.importance DESC, \(relevance), r.id"
        }
        let textClause = leading.isEmpty ? "" : "memory_fts MATCH ? AND "
        sql = """
            SELECT r.id, r.importance, r.updated_at, \(relevance), r.summary_characters FROM \(from) \
            WHERE \(textClause)\(filter.sql) ORDER BY \(order) LIMIT ?
            """
        bindings = leading + filter.bindings + [.integer(Int64(query.limit))]
    }

    /// Runs the statement: the ranked candidates, best first.
    func candidates(_ connection: SQLiteConnection) throws(SQLiteStoreError) -> [MemorySearchAssembly.Candidate] {
        var ranked: [MemorySearchAssembly.Candidate] = []
        try connection.run(sql, bindings) { row throws(SQLiteStoreError) in
            ranked.append(MemorySearchAssembly.Candidate(
                id: MemoryRecordID(rawValue: row.text(0) ?? ""), importance: Int(row.integer(1)), updatedAt: row.real(2),
                relevance: row.isNull(3) ? nil : -row.real(3), summaryCharacters: Int(row.integer(4))
            ))
        }
        return ranked
    }
}
