import CodexCore
import CodexSchema
import Foundation

/// How `codexctl usage` prints a summary: an aligned table, or one JSON object.
enum UsageReport {
    /// The table: a header, one row per group, a `total` row, and a note when a count or cost is
    /// incomplete.
    static func table(_ summary: AgentUsageSummary) -> [String] {
        let priced = summary.overall.cost != nil
        var rows = [[summary.grouping.name.uppercased(), "REQUESTS", "INPUT", "CACHED", "OUTPUT", "REASONING", "TOTAL"] + (priced ? ["COST"] : [])]
        for group in summary.groups { rows.append(cells(group.key.map(Console.display) ?? "(none)", group.totals)) }
        rows.append(cells("total", summary.overall))
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines = rows.map { row in
            row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? cell + padding : padding + cell
            }.joined(separator: "  ").trimmingTrailingSpaces
        }
        // Only the counts and costs (a group's key may end with `?` itself).
        if rows.dropFirst().contains(where: { $0.dropFirst().contains { $0.hasSuffix("?") } }) {
            lines.append("?: not every request reported the count or could be priced; N+? sums those that did")
        }
        return lines
    }

    /// A row's cells.
    private static func cells(_ key: String, _ totals: AgentUsageTotals) -> [String] {
        let counts = [totals.inputTokens, totals.cachedInputTokens, totals.outputTokens, totals.reasoningOutputTokens, totals.totalTokens]
        var row = [key, String(totals.requestCount)] + counts.map { text($0, of: totals.requestCount) }
        if let cost = totals.cost { row.append(text(cost, of: totals.requestCount)) }
        return row
    }

    /// `1500`, `1500+?` (some requests did not report it) or `?` (none did).
    private static func text(_ tally: AgentTokenTally, of requests: Int) -> String {
        if tally.isComplete { return String(tally.known) }
        return tally.unknownCount == requests ? "?" : "\(tally.known)+?"
    }

    /// `0.0028 USD`, `0.0028 USD + 0.0006 EUR`, with `+?` when some requests have no cost, or `?`.
    private static func text(_ cost: AgentUsageCost, of requests: Int) -> String {
        if requests > 0, cost.uncostedCount == requests { return "?" }
        let amounts = cost.amounts.sorted { $0.key < $1.key }.map { "\($0.value) \(Console.display($0.key))" }
        let text = amounts.isEmpty ? "0" : amounts.joined(separator: " + ")
        return cost.isComplete ? text : text + "+?"
    }

    /// `{"by": …, "groups": [{"key": …, …}], "total": {…}}`: every count as `{"sum": …, "unreported": …}`
    /// (requests that did not report it), costs as decimal strings by currency.
    static func json(_ summary: AgentUsageSummary) -> JSONValue {
        let groups: [JSONValue] = summary.groups.map { group in
            guard case .object(let object) = totals(group.totals) else { return .null }
            return .object(JSONObject([("key", group.key.map(JSONValue.string) ?? .null)] + object.members.map { ($0.key, $0.value) }))
        }
        return ["by": .string(summary.grouping.name), "groups": .array(groups), "total": totals(summary.overall)]
    }

    private static func totals(_ totals: AgentUsageTotals) -> JSONValue {
        func tally(_ tally: AgentTokenTally) -> JSONValue {
            ["sum": .number(JSONNumber(tally.known)), "unreported": .number(JSONNumber(tally.unknownCount))]
        }
        let cost: JSONValue = totals.cost.map { cost in
            let amounts = JSONObject(cost.amounts.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string("\($0.value)")) })
            return ["amounts": .object(amounts), "uncosted_requests": .number(JSONNumber(cost.uncostedCount))]
        } ?? .null
        return [
            "requests": .number(JSONNumber(totals.requestCount)),
            "tokens": [
                "input": tally(totals.inputTokens), "cached_input": tally(totals.cachedInputTokens), "cache_write_input": tally(totals.cacheWriteInputTokens),
                "output": tally(totals.outputTokens), "reasoning_output": tally(totals.reasoningOutputTokens), "total": tally(totals.totalTokens),
            ],
            "cost": cost,
        ]
    }
}

private extension String {
    var trimmingTrailingSpaces: String {
        var text = self
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }
}
