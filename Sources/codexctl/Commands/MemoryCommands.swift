import CodexCore
import CodexSchema
import CodexStorageSQLite
import Foundation

/// `codexctl memory`: inspect a SQLite memory store.
enum MemoryCommand: CLICommand {
    static let name = "memory"
    static let summary = "List, search and delete the records of a SQLite memory store."
    static let help = CommandHelp(
        command: "memory",
        overview: "List, search and delete the records of a SQLite memory store.",
        subcommands: subcommandRows
    )
    static var subcommands: [any CLICommand.Type] { [List.self, Search.self, Delete.self] }
    static func run(_ arguments: [String]) async -> Int32 { await dispatch(arguments) }

    static let dbOption = CLIOption.value("--db", "path", "The SQLite memory store (default: memory.sqlite beside the state store; see 'codexctl db path --json').")
    static let namespaceOption = CLIOption.value("--namespace", "name", "The namespace (default \"default\").")
    static let filterOptions: [CLIOption] = [
        .value("--scope", "scope", "Only records in this scope.", repeatable: true),
        .value("--tag", "tag", "Only records with this tag (any of the tags given).", repeatable: true),
        .flag("--include-archived", "Include archived records."),
        .flag("--include-expired", "Include expired records."),
    ]

    /// The store, read-only: nothing is created, migrated or changed.
    static func readOnlyStore(_ parsed: ParsedArguments) throws -> SQLiteMemoryStore {
        try SQLiteMemoryStore(readingAt: try path(parsed))
    }

    /// `--db`, else the default memory store.
    static func path(_ parsed: ParsedArguments) throws(UsageError) -> String {
        try CLIStorePaths.database(parsed.options["--db"], fallback: CLIStorePaths.memoryDatabase())
    }

    /// A positive integer option, or `fallback`; a usage error, before any store is opened, when it is
    /// not a positive integer of at most `maximum`.
    static func count(_ parsed: ParsedArguments, _ name: String, _ fallback: Int, maximum: Int = .max) throws(UsageError) -> Int {
        guard let text = parsed.options[name] else { return fallback }
        guard let value = Int(text), value > 0, value <= maximum else {
            throw UsageError(maximum == .max ? "\(name) must be a positive integer" : "\(name) must be a whole number from 1 to \(maximum)")
        }
        return value
    }

    static func namespace(_ parsed: ParsedArguments) -> MemoryNamespace {
        parsed.options["--namespace"].map(MemoryNamespace.init(rawValue:)) ?? .default
    }

    static func positionals(_ count: Int, _ what: String) -> (ParsedArguments) throws -> Void {
        { parsed in
            guard parsed.positionals.count == count else { throw UsageError(count == 0 ? "unexpected argument" : "expected one \(what)") }
        }
    }

    /// One line of a record for the text output: its summary's first line, at most 100 characters.
    static func headline(_ record: MemoryRecord) -> String {
        let first = record.summary.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return Console.display(first.count > 100 ? String(first.prefix(99)) + "…" : first)
    }

    enum List: CLICommand {
        static let name = "list"
        static let summary = "List a namespace's records, most recently updated first."
        static let help = CommandHelp(
            command: "memory list",
            overview: "List a namespace's records, most recently updated first. The store is opened read-only.",
            options: [MemoryCommand.dbOption, MemoryCommand.namespaceOption] + MemoryCommand.filterOptions + [
                .value("--limit", "n", "The most records (default 100, at most 10000)."),
                .flag("--json", "Print one JSON array."),
            ]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            await runParsed(arguments, validate: MemoryCommand.positionals(0, "")) { parsed in
                let query = MemoryListQuery(
                    namespace: MemoryCommand.namespace(parsed), scopes: (parsed.lists["--scope"] ?? []).map(MemoryScope.init(rawValue:)),
                    tags: parsed.lists["--tag"] ?? [], includeArchived: parsed.has("--include-archived"),
                    includeExpired: parsed.has("--include-expired"), limit: try MemoryCommand.count(parsed, "--limit", 100, maximum: MemoryLimits.listCount)
                )
                let records = try await MemoryCommand.readOnlyStore(parsed).list(query)
                if parsed.has("--json") {
                    Console.exactLine(try StorageCommandSupport.json(records.map(MemoryRecordJSON.init)))
                    return
                }
                for record in records {
                    Console.line(
                        "\(Console.display(record.id.rawValue))  \(Console.display(record.scope.rawValue))  \(Console.display(record.category.rawValue))  "
                            + "importance \(record.importance)  \(ISO8601DateFormatter().string(from: record.updatedAt))  \(MemoryCommand.headline(record))"
                    )
                }
                Console.line("\(records.count) record\(records.count == 1 ? "" : "s")")
            }
        }
    }

    enum Search: CLICommand {
        static let name = "search"
        static let summary = "Search a namespace's records and explain each match."
        static let help = CommandHelp(
            command: "memory search",
            overview: """
            Search a namespace's records: the text is split into words (never FTS5 syntax), ranked with BM25 and the \
            ranking profile, and cut to the read budget; each hit says which words, scope and tags matched. The store is \
            opened read-only.
            """,
            arguments: [("<text>", "The words to look for; text without words (only punctuation) matches every record, by the ranking.")],
            options: [MemoryCommand.dbOption, MemoryCommand.namespaceOption] + MemoryCommand.filterOptions + [
                .value("--match", "policy", "any (default), all, or a number N: at least N of the words (N above the number of words means all of them).").suggesting(["any", "all"]),
                .value("--ranking", "profile", "importance (default: importance, then relevance, then recency) or recency.")
                    .suggesting(["importance", "recency"]),
                .value("--records", "n", "The read budget's records (default 8)."),
                .value("--characters", "n", "The read budget's summary characters (default 1600)."),
                .value("--limit", "n", "Ranked records considered before the budget (default 64, at most 256)."),
                .flag("--json", "Print one JSON object."),
            ]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            let validate: (ParsedArguments) throws -> Void = { parsed in
                try MemoryCommand.positionals(1, "search text")(parsed)
                if let match = parsed.options["--match"], match != "any", match != "all", (Int(match) ?? 0) < 1 {
                    throw UsageError("--match must be any, all or a positive number")
                }
                if let ranking = parsed.options["--ranking"], ranking != "importance", ranking != "recency" {
                    throw UsageError("--ranking must be importance or recency")
                }
            }
            return await runParsed(arguments, validate: validate) { parsed in
                let match: MemoryQuery.MatchPolicy = switch parsed.options["--match"] {
                case nil, "any": .anyToken
                case "all": .allTokens
                case let number?: .atLeast(Int(number) ?? 1)
                }
                let query = MemoryQuery(
                    namespace: MemoryCommand.namespace(parsed), text: parsed.positionals[0], match: match,
                    scopes: (parsed.lists["--scope"] ?? []).map(MemoryScope.init(rawValue:)), tags: parsed.lists["--tag"] ?? [],
                    includeArchived: parsed.has("--include-archived"), includeExpired: parsed.has("--include-expired"),
                    ranking: parsed.options["--ranking"] == "recency" ? .recencyThenImportance : .importanceThenRecency,
                    budget: MemoryReadBudget(
                        records: try MemoryCommand.count(parsed, "--records", 8), characters: try MemoryCommand.count(parsed, "--characters", 1_600)
                    ),
                    limit: try MemoryCommand.count(parsed, "--limit", MemoryQuery.defaultLimit, maximum: MemoryLimits.resultCount)
                )
                let result = try await MemoryCommand.readOnlyStore(parsed).search(query)
                if parsed.has("--json") {
                    Console.exactLine(try StorageCommandSupport.json(MemorySearchJSON(result)))
                    return
                }
                for hit in result.hits {
                    let explanation = hit.explanation
                    var why = ["importance \(hit.record.importance)"]
                    if let relevance = explanation.relevance { why.append(String(format: "relevance %.3f", relevance)) }
                    if !explanation.matchedTokens.isEmpty { why.append("words " + Console.display(explanation.matchedTokens.joined(separator: ", "))) }
                    if let scope = explanation.matchedScope { why.append("scope " + Console.display(scope.rawValue)) }
                    if !explanation.matchedTags.isEmpty { why.append("tags " + Console.display(explanation.matchedTags.joined(separator: ", "))) }
                    Console.line("\(explanation.rank). \(Console.display(hit.record.id.rawValue))  \(why.joined(separator: "  "))")
                    Console.line("   \(MemoryCommand.headline(hit.record))")
                }
                Console.line(
                    "\(result.hits.count) hit\(result.hits.count == 1 ? "" : "s") (\(result.candidates) ranked, \(result.omittedByBudget) over the budget)"
                )
            }
        }
    }

    enum Delete: CLICommand {
        static let name = "delete"
        static let summary = "Delete one record."
        static let help = CommandHelp(
            command: "memory delete",
            overview: "Delete one record (the store must exist; it is opened for writing).",
            arguments: [("<record-id>", "The record's ID.")],
            options: [MemoryCommand.dbOption, .flag("--json", "Print one JSON object.")]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            await runParsed(arguments, validate: MemoryCommand.positionals(1, "record ID")) { parsed in
                let path = try MemoryCommand.path(parsed)
                // Opening for writing would create a missing store; deleting from one that is not there is an error.
                _ = try SQLiteMemoryStore(readingAt: path)
                let id = MemoryRecordID(rawValue: parsed.positionals[0])
                guard try await SQLiteMemoryStore(path: path).delete(id) else {
                    throw CLIFailure.Thrown(code: "memory_record_not_found", message: "no such memory record")
                }
                Console.exactLine(parsed.has("--json") ? JSONValue.object(["deleted": .string(id.rawValue)]).compactString() : "deleted")
            }
        }
    }
}

/// A record in the `--json` output (snake_case keys).
struct MemoryRecordJSON: Encodable {
    let id: String
    let namespace: String
    let scope: String
    let category: String
    let summary: String
    let evidence: [String]
    let importance: Int
    let tags: [String]
    let relatedIds: [String]
    let attributes: [String: String]
    let dedupeKey: String?
    let expiresAt: Date?
    let archived: Bool
    let createdAt: Date
    let updatedAt: Date

    init(_ record: MemoryRecord) {
        id = record.id.rawValue
        namespace = record.namespace.rawValue
        scope = record.scope.rawValue
        category = record.category.rawValue
        summary = record.summary
        evidence = record.evidence
        importance = record.importance
        tags = record.tags
        relatedIds = record.relatedIDs.map(\.rawValue)
        attributes = record.attributes
        dedupeKey = record.dedupeKey
        expiresAt = record.expiresAt
        archived = record.isArchived
        createdAt = record.createdAt
        updatedAt = record.updatedAt
    }
}

/// A search result in the `--json` output.
struct MemorySearchJSON: Encodable {
    struct Hit: Encodable {
        let record: MemoryRecordJSON
        let explanation: Explanation
    }

    struct Explanation: Encodable {
        let matchedTokens: [String]
        let matchedScope: String?
        let matchedTags: [String]
        let rank: Int
        let relevance: Double?
    }

    let hits: [Hit]
    let candidates: Int
    let omittedByBudget: Int

    init(_ result: MemorySearchResult) {
        hits = result.hits.map { hit in
            Hit(record: MemoryRecordJSON(hit.record), explanation: Explanation(
                matchedTokens: hit.explanation.matchedTokens, matchedScope: hit.explanation.matchedScope?.rawValue,
                matchedTags: hit.explanation.matchedTags, rank: hit.explanation.rank, relevance: hit.explanation.relevance
            ))
        }
        candidates = result.candidates
        omittedByBudget = result.omittedByBudget
    }
}
