import CodexCore
import CodexStorageSQLite
import Foundation

/// Opens the `--db` store for a storage command.
enum StorageCommandSupport {
    static func store(_ parsed: ParsedArguments) throws -> SQLiteRuntimeStateStore {
        guard let path = parsed.options["--db"] else { throw UsageError("--db <path> is required") }
        return try SQLiteRuntimeStateStore(path: path)
    }

    /// Parses, runs `body`, and maps errors to exit statuses (64 usage, 1 failure).
    static func execute<Command: CLICommand>(
        _ command: Command.Type, _ arguments: [String], flags: Set<String> = ["--json"], positionals: Int,
        _ body: (ParsedArguments) async throws -> Void
    ) async -> Int32 {
        let validate: (ParsedArguments) throws -> Void = { parsed in
            guard parsed.positionals.count == positionals else { throw UsageError(positionals == 1 ? "expected one thread ID" : "unexpected argument") }
            guard parsed.options["--db"] != nil else { throw UsageError("--db <path> is required") }
        }
        return await command.runParsed(arguments, flags: flags, valueOptions: ["--db"], validate: validate, body)
    }

    /// The store and the existing thread named by the first positional argument.
    static func existingThread(_ parsed: ParsedArguments) async throws -> (SQLiteRuntimeStateStore, AgentThread) {
        let store = try store(parsed)
        guard let thread = try await store.thread(AgentThreadID(rawValue: parsed.positionals[0])) else {
            throw SQLiteStoreError(code: .threadNotFound, message: "no such thread")
        }
        return (store, thread)
    }

    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static let dbOption = ("--db <path>", "The SQLite state store (required).")
}

/// `codexctl threads`.
enum ThreadsCommand: CLICommand {
    static let name = "threads"
    static let help = CommandHelp(
        overview: "Inspect the threads of a SQLite state store.",
        usage: "codexctl threads <subcommand> --db <path>",
        subcommands: [
            ("list", "List threads, most recently updated first."),
            ("show", "Show one thread and its latest turn."),
            ("export", "Print a thread's history as JSON lines."),
            ("delete", "Delete a thread with its history and turns."),
        ]
    )
    static var subcommands: [any CLICommand.Type] { [List.self, Show.self, Export.self, Delete.self] }
    static func run(_ arguments: [String]) async -> Int32 { await dispatch(arguments) }

    enum List: CLICommand {
        static let name = "list"
        static let help = CommandHelp(
            overview: "List threads, most recently updated first.", usage: "codexctl threads list --db <path> [--json]",
            options: [StorageCommandSupport.dbOption, ("--json", "Print one JSON array.")]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            if printsHelp(arguments) { return Console.Status.success }
            return await StorageCommandSupport.execute(Self.self, arguments, positionals: 0) { parsed in
                let threads = try await StorageCommandSupport.store(parsed).threads()
                if parsed.has("--json") {
                    Console.line(try StorageCommandSupport.json(threads))
                    return
                }
                for thread in threads {
                    Console.line("\(thread.id.rawValue)  \(thread.status.rawValue)  \(ISO8601DateFormatter().string(from: thread.updatedAt))  \(thread.title ?? "")")
                }
                Console.line("\(threads.count) threads")
            }
        }
    }

    enum Show: CLICommand {
        static let name = "show"
        static let help = CommandHelp(
            overview: "Show one thread and its latest turn.", usage: "codexctl threads show <thread-id> --db <path> [--json]",
            options: [StorageCommandSupport.dbOption, ("--json", "Print one JSON object.")]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            if printsHelp(arguments) { return Console.Status.success }
            return await StorageCommandSupport.execute(Self.self, arguments, positionals: 1) { parsed in
                let (store, thread) = try await StorageCommandSupport.existingThread(parsed)
                let turn = try await store.latestTurn(of: thread.id)
                if parsed.has("--json") {
                    struct Shown: Encodable { let thread: AgentThread; let latestTurn: AgentTurn? }
                    Console.line(try StorageCommandSupport.json(Shown(thread: thread, latestTurn: turn)))
                    return
                }
                Console.line("thread   \(thread.id.rawValue)")
                Console.line("title    \(thread.title ?? "")")
                Console.line("status   \(thread.status.rawValue)")
                Console.line("updated  \(ISO8601DateFormatter().string(from: thread.updatedAt))")
                if let turn { Console.line("turn     \(turn.id.rawValue) \(turn.status.rawValue)") }
            }
        }
    }

    enum Export: CLICommand {
        static let name = "export"
        static let help = CommandHelp(
            overview: "Print a thread's whole history, oldest first, one JSON object per line.",
            usage: "codexctl threads export <thread-id> --db <path>", options: [StorageCommandSupport.dbOption]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            if printsHelp(arguments) { return Console.Status.success }
            return await StorageCommandSupport.execute(Self.self, arguments, flags: [], positionals: 1) { parsed in
                let (store, thread) = try await StorageCommandSupport.existingThread(parsed)
                let id = thread.id
                var cursor: String?
                repeat {
                    let page = try await store.history(of: id, query: AgentHistoryQuery(limit: 1024, cursor: cursor))
                    for item in page.items { Console.line(try StorageCommandSupport.json(item)) }
                    cursor = page.nextCursor
                } while cursor != nil
            }
        }
    }

    enum Delete: CLICommand {
        static let name = "delete"
        static let help = CommandHelp(
            overview: "Delete a thread with its history and turns.", usage: "codexctl threads delete <thread-id> --db <path>",
            options: [StorageCommandSupport.dbOption]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            if printsHelp(arguments) { return Console.Status.success }
            return await StorageCommandSupport.execute(Self.self, arguments, flags: [], positionals: 1) { parsed in
                let (store, thread) = try await StorageCommandSupport.existingThread(parsed)
                try await store.deleteThread(thread.id)
                Console.line("deleted")
            }
        }
    }
}

/// `codexctl db`.
enum DatabaseCommand: CLICommand {
    static let name = "db"
    static let help = CommandHelp(
        overview: "Check or migrate a SQLite state store.",
        usage: "codexctl db <subcommand> --db <path>",
        subcommands: [("check", "Run PRAGMA integrity_check and print the schema version."), ("migrate", "Apply pending migrations.")]
    )
    static var subcommands: [any CLICommand.Type] { [Check.self, Migrate.self] }
    static func run(_ arguments: [String]) async -> Int32 { await dispatch(arguments) }

    enum Check: CLICommand {
        static let name = "check"
        static let help = CommandHelp(
            overview: "Run PRAGMA integrity_check (exit 1 unless it says ok) and print the schema version.",
            usage: "codexctl db check --db <path> [--json]", options: [StorageCommandSupport.dbOption, ("--json", "Print one JSON object.")]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            if printsHelp(arguments) { return Console.Status.success }
            return await StorageCommandSupport.execute(Self.self, arguments, positionals: 0) { parsed in
                let store = try StorageCommandSupport.store(parsed)
                let lines = try await store.integrityCheck()
                let version = try store.schemaVersion
                if parsed.has("--json") {
                    struct Checked: Encodable { let integrity: [String]; let schemaVersion: Int; let sqliteVersion: Int }
                    Console.line(try StorageCommandSupport.json(Checked(integrity: lines, schemaVersion: version, sqliteVersion: SQLiteRuntimeStateStore.sqliteVersion)))
                } else {
                    Console.line("integrity  \(lines.joined(separator: "; "))")
                    Console.line("schema     \(version)")
                }
                guard lines == ["ok"] else { throw SQLiteStoreError(code: .corrupt, message: "the integrity check failed") }
            }
        }
    }

    enum Migrate: CLICommand {
        static let name = "migrate"
        static let help = CommandHelp(
            overview: "Apply pending migrations (opening the store does this too) and print the schema version.",
            usage: "codexctl db migrate --db <path>", options: [StorageCommandSupport.dbOption]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            if printsHelp(arguments) { return Console.Status.success }
            return await StorageCommandSupport.execute(Self.self, arguments, flags: [], positionals: 0) { parsed in
                Console.line("schema \(try StorageCommandSupport.store(parsed).schemaVersion)")
            }
        }
    }
}
