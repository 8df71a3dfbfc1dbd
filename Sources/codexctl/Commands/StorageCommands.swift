import CodexCore
import CodexSchema
import CodexStoragePostgres
import CodexStorageSQLite
import Foundation

/// Opens the `--db` store for a storage command.
enum StorageCommandSupport {
    /// The store for a command that changes it (`delete`, `migrate`, `approve`): opened for writing.
    /// With `creating` and no `--db`, the default store's directory is created first (private), as
    /// `send` creates it: on a new machine `db migrate` makes the store the other commands will use.
    static func store(_ parsed: ParsedArguments, creating: Bool = false) async throws -> any CLIStateStore {
        let location = try path(parsed)
        if creating, parsed.options["--db"] == nil {
            try FileManager.default.createDirectory(atPath: CLIStorePaths.directory(), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        return try await CLIStateStores.open(location, creating: creating)
    }

    /// The store for a command that only looks: opened read-only, so nothing is created, migrated or
    /// changed (a missing file is an error naming it).
    static func readOnlyStore(_ parsed: ParsedArguments) async throws -> any CLIStateStore {
        try await CLIStateStores.openReadOnly(try path(parsed))
    }

    /// `--db`, else the store `send` and `chat` use.
    static func path(_ parsed: ParsedArguments) throws(UsageError) -> String {
        try CLIStorePaths.database(parsed.options["--db"], fallback: CLIStorePaths.stateDatabase())
    }

    /// Parses, runs `body`, and maps errors to exit statuses (64 usage, 1 failure).
    static func execute<Command: CLICommand>(
        _ command: Command.Type, _ arguments: [String], positionals: Int, validate check: (ParsedArguments) throws -> Void = { _ in },
        _ body: (ParsedArguments) async throws -> Void
    ) async -> Int32 {
        let validate: (ParsedArguments) throws -> Void = { parsed in
            guard parsed.positionals.count == positionals else {
                throw UsageError(positionals == 1 ? "expected one \(command.help.arguments.first?.0 ?? "argument")" : "unexpected argument")
            }
            try check(parsed)
        }
        return await command.runParsed(arguments, validate: validate, body)
    }

    /// The store and the existing thread named by the first positional argument.
    static func existingThread(_ parsed: ParsedArguments, readOnly: Bool = true) async throws -> (any CLIStateStore, AgentThread) {
        let store = try await readOnly ? readOnlyStore(parsed) : store(parsed)
        guard let thread = try await store.thread(AgentThreadID(rawValue: parsed.positionals[0])) else {
            throw SQLiteStoreError(code: .threadNotFound, message: "no such thread")
        }
        return (store, thread)
    }

    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // One casing for every command's JSON: snake_case.
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static let dbOption = CLIOption.value(
        "--db", "path|url", "The state store: a SQLite file (default: the one send and chat use; see 'codexctl db path') or a postgresql:// URL."
    )
    /// The thread a command acts on.
    static let threadArgument = ("<thread-id>", "The thread's ID.")
}

/// `codexctl threads`.
enum ThreadsCommand: CLICommand {
    static let name = "threads"
    static let summary = "Inspect the threads of a state store (SQLite or PostgreSQL)."
    static let help = CommandHelp(
        command: "threads",
        overview: "Inspect the threads of a state store (SQLite or PostgreSQL).",
        subcommands: subcommandRows
    )
    static var subcommands: [any CLICommand.Type] { [List.self, Show.self, Export.self, Delete.self] }
    static func run(_ arguments: [String]) async -> Int32 { await dispatch(arguments) }

    enum List: CLICommand {
        static let name = "list"
        static let summary = "List threads, most recently updated first."
        static let help = CommandHelp(
            command: "threads list",
            overview: "List threads, most recently updated first.",
            options: [StorageCommandSupport.dbOption, .flag("--json", "Print one JSON array.")]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            return await StorageCommandSupport.execute(Self.self, arguments, positionals: 0) { parsed in
                let threads = try await StorageCommandSupport.readOnlyStore(parsed).threads()
                if parsed.has("--json") {
                    Console.exactLine(JSONValue.array(threads.map(ThreadExport.thread)).compactString())
                    return
                }
                // The store checks every row's body against its key, so the ID shown is the row's key.
                for thread in threads {
                    Console.line(
                        "\(Console.display(thread.id.rawValue))  \(Console.display(thread.status.rawValue))  "
                            + "\(ISO8601DateFormatter().string(from: thread.updatedAt))  \(Console.display(thread.title ?? ""))"
                    )
                }
                Console.line("\(threads.count) thread\(threads.count == 1 ? "" : "s")")
            }
        }
    }

    enum Show: CLICommand {
        static let name = "show"
        static let summary = "Show one thread and its latest turn."
        static let help = CommandHelp(
            command: "threads show",
            overview: "Show one thread, its latest turn, its history size and its compaction points (where later requests stopped replaying the items before).",
            arguments: [StorageCommandSupport.threadArgument],
            options: [StorageCommandSupport.dbOption, .flag("--json", "Print one JSON object.")]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            return await StorageCommandSupport.execute(Self.self, arguments, positionals: 1) { parsed in
                let (store, thread) = try await StorageCommandSupport.existingThread(parsed)
                let turn = try await store.latestTurn(of: thread.id)
                // Compaction points: where later requests stopped replaying the history before them.
                var compactions: [(position: Int, record: AgentContextCompaction)] = []
                var position = 0
                var cursor: String?
                repeat {
                    let page = try await store.history(of: thread.id, query: AgentHistoryQuery(limit: 1024, cursor: cursor))
                    for item in page.items {
                        if case .contextCompaction(let record) = item { compactions.append((position, record)) }
                        position += 1
                    }
                    cursor = page.nextCursor
                } while cursor != nil
                if parsed.has("--json") {
                    let points: [JSONValue] = compactions.map { point in
                        guard case .object(var object) = ThreadExport.jsonLine(.contextCompaction(point.record)) else { return .null }
                        object["type"] = nil
                        object["position"] = .number(JSONNumber(point.position))
                        return .object(object)
                    }
                    Console.exactLine(JSONValue.object([
                        "thread": ThreadExport.thread(thread), "latest_turn": turn.map(ThreadExport.turn) ?? .null,
                        "history_items": .number(JSONNumber(position)), "compactions": .array(points),
                    ]).compactString())
                    return
                }
                Console.line("thread   \(Console.display(thread.id.rawValue))")
                Console.line("title    \(Console.display(thread.title ?? ""))")
                Console.line("status   \(Console.display(thread.status.rawValue))")
                Console.line("updated  \(ISO8601DateFormatter().string(from: thread.updatedAt))")
                if let turn { Console.line("turn     \(Console.display(turn.id.rawValue)) \(Console.display(turn.status.rawValue))") }
                Console.line("history  \(position) item\(position == 1 ? "" : "s")")
                for point in compactions {
                    let record = point.record
                    Console.line(
                        "compacted at item \(point.position) (\(record.strategy.rawValue), \(ISO8601DateFormatter().string(from: record.createdAt))): "
                            + "\(record.replacedItemCount) items replaced, about \(record.estimatedTokensBefore) → \(record.estimatedTokensAfter) tokens"
                    )
                }
            }
        }
    }

    enum Export: CLICommand {
        static let name = "export"
        static let summary = "Print a thread's history as JSON lines."
        static let help = CommandHelp(
            command: "threads export",
            overview: """
            Print a thread's whole history, oldest first: JSON Lines (one object per item, each with a "type"; the \
            shapes are in Docs/CLI.md) or a Markdown transcript. The store is opened read-only.
            """,
            arguments: [StorageCommandSupport.threadArgument],
            options: [
                StorageCommandSupport.dbOption,
                .value("--format", "format", "jsonl (default) or markdown.").suggesting(["jsonl", "markdown"]),
                .flag("--json", "Report errors as one JSON object on stdout."),
            ]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            let validate: (ParsedArguments) throws -> Void = { parsed in
                if let format = parsed.options["--format"], ThreadExport.Format(rawValue: format) == nil {
                    throw UsageError("--format must be jsonl or markdown")
                }
            }
            return await StorageCommandSupport.execute(Self.self, arguments, positionals: 1, validate: validate) { parsed in
                let format = parsed.options["--format"].flatMap(ThreadExport.Format.init(rawValue:)) ?? .jsonl
                let (store, thread) = try await StorageCommandSupport.existingThread(parsed)
                if format == .markdown { Console.out(ThreadExport.markdownHeading(thread)) }
                var cursor: String?
                repeat {
                    let page = try await store.history(of: thread.id, query: AgentHistoryQuery(limit: 1024, cursor: cursor))
                    for item in page.items {
                        switch format {
                        case .jsonl: Console.exactLine(ThreadExport.jsonLine(item).compactString())
                        case .markdown: if let text = ThreadExport.markdown(item) { Console.out(text) }
                        }
                    }
                    cursor = page.nextCursor
                } while cursor != nil
            }
        }
    }

    enum Delete: CLICommand {
        static let name = "delete"
        static let summary = "Delete a thread with everything kept for it (history, turns, journals, approvals, usage records)."
        static let help = CommandHelp(
            command: "threads delete",
            overview: """
            Delete a thread with everything the store keeps for it: its history and images, its turns, its durable turns' \
            journals and approvals, and its usage-ledger records (a later 'codexctl usage' no longer counts them: sum them \
            first if you need the figures). There is no undo.
            """, arguments: [StorageCommandSupport.threadArgument],
            options: [StorageCommandSupport.dbOption, .flag("--json", "Print one JSON object.")]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            return await StorageCommandSupport.execute(Self.self, arguments, positionals: 1) { parsed in
                let (store, thread) = try await StorageCommandSupport.existingThread(parsed, readOnly: false)
                try await store.deleteThread(thread.id)
                Console.exactLine(parsed.has("--json") ? JSONValue.object(["deleted": .string(thread.id.rawValue)]).compactString() : "deleted")
            }
        }
    }
}

/// `codexctl db`.
enum DatabaseCommand: CLICommand {
    static let name = "db"
    static let summary = "Locate, check or migrate a state store (SQLite or PostgreSQL)."
    static let help = CommandHelp(
        command: "db",
        overview: "Locate, check or migrate a state store (SQLite or PostgreSQL).",
        subcommands: subcommandRows
    )
    static var subcommands: [any CLICommand.Type] { [Path.self, Check.self, Migrate.self] }

    enum Path: CLICommand {
        static let name = "path"
        static let summary = "Print where the default state and memory stores are."
        static let help = CommandHelp(
            command: "db path",
            overview: """
            Print the state store the state commands use when --db is not given (the one send and chat write): \
            $XDG_STATE_HOME/codexkit/state.sqlite, else ~/.local/state/codexkit/state.sqlite; with --json, the memory \
            store the memory commands use too. Nothing is opened or created.
            """,
            options: [.flag("--json", "Print one JSON object with the state and memory store paths.")]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            return await StorageCommandSupport.execute(Self.self, arguments, positionals: 0) { parsed in
                if parsed.has("--json") {
                    Console.exactLine(JSONValue.object([
                        "state": .string(CLIStorePaths.stateDatabase()), "memory": .string(CLIStorePaths.memoryDatabase()),
                    ]).compactString())
                } else {
                    Console.exactLine(CLIStorePaths.stateDatabase())
                }
            }
        }
    }
    static func run(_ arguments: [String]) async -> Int32 { await dispatch(arguments) }

    enum Check: CLICommand {
        static let name = "check"
        static let summary = "Check a store without changing it and print its schema version."
        static let help = CommandHelp(
            command: "db check",
            overview: """
            Check a state store without changing it (it is opened read-only): SQLite's integrity check, then the expected \
            tables and columns, every row decoded and checked against its key, foreign keys, and every image blob. A \
            PostgreSQL store gets the same checks of its migrations, tables, rows and blobs (the server keeps its own \
            pages). Exit 1 when anything is wrong; the first problems are printed with their table and row key.
            """,
            options: [StorageCommandSupport.dbOption, .flag("--quick", "Run SQLite's integrity check only."), .flag("--json", "Print one JSON object.")]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            return await StorageCommandSupport.execute(Self.self, arguments, positionals: 0) { parsed in
                let store = try await StorageCommandSupport.readOnlyStore(parsed)
                if let postgres = store as? PostgresRuntimeStateStore {
                    try await checkPostgres(postgres, json: parsed.has("--json"))
                    return
                }
                guard let store = store as? SQLiteRuntimeStateStore else { return }
                let report = try await store.check(parsed.has("--quick") ? .quick : .full)
                if parsed.has("--json") {
                    struct Checked: Encodable {
                        let healthy: Bool
                        let engine = "sqlite"
                        let integrity: [String]
                        let schemaVersion: Int
                        let sqliteVersion: Int
                        let deep: Bool
                        let rowsChecked: Int
                        let problemCount: Int
                        let problems: [SQLiteStoreCheckReport.Problem]
                    }
                    Console.exactLine(try StorageCommandSupport.json(Checked(
                        healthy: report.isHealthy, integrity: report.integrity, schemaVersion: report.schemaVersion,
                        sqliteVersion: SQLiteRuntimeStateStore.sqliteVersion, deep: report.isDeep, rowsChecked: report.rowsChecked,
                        problemCount: report.problemCount, problems: report.problems
                    )))
                } else {
                    Console.line("integrity  \(Console.display(report.integrity.joined(separator: "; ")))")
                    Console.line("schema     \(report.schemaVersion)")
                    if report.isDeep {
                        Console.line("rows       \(report.rowsChecked) checked, \(report.problemCount) problem\(report.problemCount == 1 ? "" : "s")")
                        for problem in report.problems {
                            let key = problem.rowKey.map { " row \(Console.display($0))" } ?? ""
                            Console.line("problem    \(problem.table)\(key): \(problem.message)")
                        }
                    }
                }
                guard report.isHealthy else {
                    if parsed.has("--json") { throw CLIFailure.Reported() }
                    throw SQLiteStoreError(
                        code: .corrupt, message: report.integrity == ["ok"] ? "the store has \(report.problemCount) problem(s)" : "the integrity check failed"
                    )
                }
            }
        }

        /// The same deep checks on a PostgreSQL store: migrations, tables and columns, every row and every
        /// image blob (the server keeps its own pages; there is no file to check).
        static func checkPostgres(_ store: PostgresRuntimeStateStore, json: Bool) async throws {
            let report = try await store.check()
            if json {
                struct Checked: Encodable {
                    let healthy: Bool
                    let engine = "postgres"
                    let schema: String
                    let schemaVersion: Int
                    let serverVersion: Int
                    let deep = true
                    let rowsChecked: Int
                    let problemCount: Int
                    let problems: [PostgresStoreCheckReport.Problem]
                }
                Console.exactLine(try StorageCommandSupport.json(Checked(
                    healthy: report.isHealthy, schema: store.schema, schemaVersion: report.schemaVersion, serverVersion: report.serverVersion,
                    rowsChecked: report.rowsChecked, problemCount: report.problemCount, problems: report.problems
                )))
            } else {
                Console.line("server     PostgreSQL \(report.serverVersion / 10_000).\(report.serverVersion % 10_000)")
                Console.line("schema     \(report.schemaVersion) (\(Console.display(store.schema)))")
                Console.line("rows       \(report.rowsChecked) checked, \(report.problemCount) problem\(report.problemCount == 1 ? "" : "s")")
                for problem in report.problems {
                    let key = problem.rowKey.map { " row \(Console.display($0))" } ?? ""
                    Console.line("problem    \(problem.table)\(key): \(problem.message)")
                }
            }
            guard report.isHealthy else {
                if json { throw CLIFailure.Reported() }
                throw PostgresStoreError(code: .rowUndecodable, message: "the store has \(report.problemCount) problem(s)")
            }
        }
    }

    enum Migrate: CLICommand {
        static let name = "migrate"
        static let summary = "Apply pending migrations."
        static let help = CommandHelp(
            command: "db migrate",
            overview: "Apply pending migrations (opening the store does this too) and print the schema version.",
            options: [StorageCommandSupport.dbOption, .flag("--json", "Print one JSON object.")]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            return await StorageCommandSupport.execute(Self.self, arguments, positionals: 0) { parsed in
                let version = try await StorageCommandSupport.store(parsed, creating: true).appliedMigrations()
                Console.exactLine(parsed.has("--json") ? JSONValue.object(["schema_version": .number(JSONNumber(version))]).compactString() : "schema \(version)")
            }
        }
    }
}
