public import CodexCore
import Foundation

extension SQLiteMemoryStore {
    /// See ``CodexCore/MemoryStoring/search(_:)``. One read transaction: the ranked candidates come from
    /// one statement (FTS5 `MATCH` with every token quoted, `bm25()` for relevance), then the records
    /// that fit the read budget are decoded.
    public func search(_ query: MemoryQuery) async throws(MemoryStoreError) -> MemorySearchResult {
        try query.validate()
        let plan = SQLiteMemorySearchPlan(query)
        return try await read { connection in
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

/// The statements that rank a query's candidates: their SQL and bindings. User text only ever reaches
/// SQLite as bound values, and reaches FTS5 only as quoted tokens (``CodexCore/MemoryText/ftsQuery(_:all:)``)
/// confined to the `summary` and `evidence` columns.
///
/// Ranked by importance with text of which not every token is required (the broad queries: any token,
/// at least N), the plan is one statement per importance level, highest
/// first, each matching only that level's `level` token (`importance10` … `importance0`) and ordered by
/// BM25 (the `level` column weighted 0) then recency; they run in order until the limit is filled. This
/// is the order a single `ORDER BY importance DESC, bm25, updated_at DESC` gives, but FTS5 scores only
/// the matches of the levels it reaches, not every match of a broad query. Otherwise (every token
/// required, recency first, or no text) it is one statement.
struct SQLiteMemorySearchPlan {
    /// One statement; its last binding, the row limit, is added when it runs.
    struct Step {
        let sql: String
        let bindings: [SQLiteValue]
    }

    let steps: [Step]
    let limit: Int
    let tokens: [String]

    /// BM25 over `summary` and `evidence`; the `level` column never adds to relevance.
    private static let relevance = "bm25(memory_fts, 1.0, 1.0, 0.0)"

    init(_ query: MemoryQuery) {
        tokens = query.tokens
        limit = query.limit
        let required = query.requiredMatches
        var filter = SQLiteMemoryFilter(namespace: query.namespace)
        filter.add(scopes: query.scopes, tags: query.tags, includeArchived: query.includeArchived, includeExpired: query.includeExpired, asOf: query.asOf)
        let columns = "SELECT r.id, r.importance, r.updated_at, %@, r.summary_characters FROM "
        let all = required == tokens.count && tokens.count > 1
        guard let match = MemoryText.ftsQuery(tokens, all: all).map(Self.inText) else {
            let order = switch query.ranking {
            case .importanceThenRecency: "r.importance DESC, r.updated_at DESC, r.id"
            case .recencyThenImportance: "r.updated_at DESC, r.importance DESC, r.id"
            }
            let sql = columns.replacingOccurrences(of: "%@", with: "NULL") + "memory_records r WHERE \(filter.sql) ORDER BY \(order) LIMIT ?"
            steps = [Step(sql: sql, bindings: filter.bindings)]
            return
        }
        if required > 1, required < tokens.count {
            // At least `required` of the tokens: one membership test per token, summed.
            let tests = tokens.map { _ in "(r.key IN (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?))" }
            filter.add("(" + tests.joined(separator: " + ") + ") >= ?", tokens.map { .text(Self.inText(MemoryText.quoted($0))) } + [.integer(Int64(required))])
        }
        let from = columns.replacingOccurrences(of: "%@", with: Self.relevance)
            + "memory_fts JOIN memory_records r ON r.key = memory_fts.rowid WHERE memory_fts MATCH ? AND \(filter.sql) ORDER BY "
        switch query.ranking {
        case .importanceThenRecency where !all:
            let sql = from + "\(Self.relevance), r.updated_at DESC, r.id LIMIT ?"
            steps = MemoryLimits.importance.reversed().map { level in
                Step(sql: sql, bindings: [.text("(\(match)) AND level : \(SQLiteMemorySchema.levelToken(level))")] + filter.bindings)
            }
        case .importanceThenRecency:
            // Every token required: the matches are few, and one statement is cheaper than eleven.
            let sql = from + "r.importance DESC, \(Self.relevance), r.updated_at DESC, r.id LIMIT ?"
            steps = [Step(sql: sql, bindings: [.text(match)] + filter.bindings)]
        case .recencyThenImportance:
            let sql = from + "r.updated_at DESC, r.importance DESC, \(Self.relevance), r.id LIMIT ?"
            steps = [Step(sql: sql, bindings: [.text(match)] + filter.bindings)]
        }
    }

    /// `expression` confined to the record's text columns (never the `level` column).
    private static func inText(_ expression: String) -> String { "{summary evidence} : (\(expression))" }

    /// Runs the statements in order until `limit` rows came back, calling `body` with each row.
    func run(_ connection: SQLiteConnection, _ body: (SQLiteRow) throws(SQLiteStoreError) -> Void) throws(SQLiteStoreError) {
        var count = 0
        try withoutActuallyEscaping(body) { body throws(SQLiteStoreError) in
            for step in steps where count < limit {
                try connection.run(step.sql, step.bindings + [.integer(Int64(limit - count))]) { row throws(SQLiteStoreError) in
                    count += 1
                    try body(row)
                }
            }
        }
    }

    /// Runs the statements: the ranked candidates, best first.
    func candidates(_ connection: SQLiteConnection) throws(SQLiteStoreError) -> [MemorySearchAssembly.Candidate] {
        var ranked: [MemorySearchAssembly.Candidate] = []
        try run(connection) { row throws(SQLiteStoreError) in
            ranked.append(MemorySearchAssembly.Candidate(
                id: MemoryRecordID(rawValue: row.text(0) ?? ""), importance: Int(row.integer(1)), updatedAt: row.real(2),
                relevance: row.isNull(3) ? nil : -row.real(3), summaryCharacters: Int(row.integer(4))
            ))
        }
        return ranked
    }
}
