import CodexCore
import CodexSchema
import Foundation

/// `codexctl usage`: the state store's usage ledger, summed by thread, turn, account, model or day,
/// with costs from a price file. The store is opened read-only.
enum UsageCommand: CLICommand {
    static let name = "usage"
    static let summary = "Sum the tokens (and cost) the state store's usage ledger recorded."
    static let help = CommandHelp(
        command: "usage",
        overview: """
        Sum the token usage the state store's ledger recorded (one record per model response), grouped by thread, turn, \
        account, model or UTC day, with a cost column when a price file is given. The store is opened read-only: nothing \
        is created, migrated or changed. A count some requests did not report is never shown as zero: 1500+? is the sum \
        of the requests that reported it, ? means none did; a cost of +? or ? counts requests without a price for their \
        model and date, or without a count the price needs.
        """,
        options: [
            StorageCommandSupport.dbOption,
            .value("--thread", "id", "Only this thread's records."),
            .value("--turn", "id", "Only this turn's records."),
            .value("--account", "binding", "Only the records under this account binding."),
            .value("--model", "model", "Only this model's records (exact name)."),
            .value("--since", "date", "Only records at or after this date: 2026-12-01 (midnight UTC) or 2026-12-01T10:00:00Z."),
            .value("--until", "date", "Only records before this date (exclusive), in the same forms."),
            .value("--by", "grouping", "Group by thread, turn, account, model (the default) or day (UTC).")
                .suggesting(["thread", "turn", "account", "model", "day"]),
            .value("--prices", "file", "A price file (JSON, prices per million tokens by model and date; see Docs/CLI.md) for a cost column."),
            .flag("--json", "Print one JSON object."),
        ]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        await StorageCommandSupport.execute(Self.self, arguments, positionals: 0, validate: { parsed in _ = try options(parsed) }) { parsed in
            let (query, grouping) = try options(parsed)
            // The price file first: a bad one fails before the store is opened.
            let prices = try parsed.options["--prices"].map(Self.prices)
            let store = try await StorageCommandSupport.readOnlyStore(parsed)
            // A stream: memory holds the groups, not the ledger.
            var accumulator = AgentUsageSummary.Accumulator(by: grouping, prices: prices)
            try await store.forEachUsageRecord(matching: query) { accumulator.add($0) }
            let summary = accumulator.summary
            if parsed.has("--json") {
                Console.exactLine(UsageReport.json(summary).compactString())
            } else {
                for line in UsageReport.table(summary) { Console.line(line) }
            }
        }
    }

    /// The query and grouping the options name.
    /// - Throws: ``UsageError`` for a date that is not ISO 8601, `--since` not before `--until`, or an
    ///   unknown grouping.
    static func options(_ parsed: ParsedArguments) throws(UsageError) -> (AgentUsageQuery, AgentUsageGrouping) {
        func date(_ option: String) throws(UsageError) -> Date? {
            guard let text = parsed.options[option] else { return nil }
            guard let date = ISO8601Instant.date(from: text) else {
                throw UsageError("\(option) needs an ISO 8601 date such as 2026-12-01 or 2026-12-01T10:00:00Z")
            }
            return date
        }
        let query = AgentUsageQuery(
            threadID: parsed.options["--thread"].map(AgentThreadID.init(rawValue:)), turnID: parsed.options["--turn"].map(AgentTurnID.init(rawValue:)),
            accountBinding: parsed.options["--account"], model: parsed.options["--model"], since: try date("--since"), until: try date("--until")
        )
        if let since = query.since, let until = query.until, since >= until { throw UsageError("--since must be before --until") }
        var grouping = AgentUsageGrouping.model
        if let name = parsed.options["--by"] {
            guard let named = AgentUsageGrouping(name: name) else { throw UsageError("--by must be thread, turn, account, model or day") }
            grouping = named
        }
        return (query, grouping)
    }

    /// The price file at `path` (at most 4 MiB).
    /// - Throws: the file's read failure, or ``CodexCore/AgentPriceTableError``.
    static func prices(_ path: String) throws -> AgentPriceTable {
        try AgentPriceTable(json: try Console.readInput(path, limit: 4 << 20))
    }
}
