import CodexCore
import CodexRecovery
import CodexSchema
import CodexTransport
import Foundation

/// `codexctl recovery`: inspect and maintain a structured-recovery store. It never generates.
enum RecoveryCommand: CLICommand {
    static let name = "recovery"
    static let summary = "Inspect and maintain a structured-recovery store."
    static let help = CommandHelp(
        command: "recovery",
        overview: "Inspect and maintain a structured-recovery store (never sends a generation request).",
        subcommands: subcommandRows
    )
    static var subcommands: [any CLICommand.Type] {
        [RecoveryListCommand.self, RecoveryStatusCommand.self, RecoveryReceiptCommand.self, RecoveryAckCommand.self,
         RecoveryAbandonCommand.self, RecoveryCancelCommand.self, RecoverySuspendCommand.self, RecoveryPurgeCommand.self,
         RecoveryCleanupCommand.self]
    }

    static func run(_ arguments: [String]) async -> Int32 { await dispatch(arguments) }

    /// The options every subcommand shares.
    static let commonOptions: [CLIOption] = [
        .value("--store", "dir", "The recovery store directory.", required: true),
        .value("--binding", "binding", "Act for this account binding (e.g. after sign-out) instead of the signed-in account's."),
        CLIAuth.secretsOption, CLIAuth.codexHomeOption,
        .flag("--json", "Print JSON."),
    ]
    /// The operation a command acts on.
    static let operationArgument = ("<operation-id>", "The operation's UUID.")

    /// The store, the service and the account binding the command acts for.
    struct Context {
        let store: AgentStructuredRecoveryStore
        let recovery: AgentStructuredRecovery
        let binding: String
        let json: Bool
    }

    /// The store (read-only for commands that only look), the service and the binding.
    static func context(_ parsed: ParsedArguments, readOnly: Bool) async throws -> Context {
        guard let path = parsed.options["--store"] else { throw UsageError("--store <dir> is required") }
        guard !path.isEmpty else { throw UsageError("--store needs a directory path (an empty one would mean the current directory)") }
        if parsed.options["--binding"]?.isEmpty == true { throw UsageError("--binding needs an account binding (it is empty)") }
        let url = URL(fileURLWithPath: path)
        // A command that changes a store never creates one, nor makes a store of a directory that is not
        // one (opening for writing would make it private and add the store's files): a mistyped path is
        // an error.
        guard readOnly || AgentStructuredRecoveryStore.looksLikeStore(at: url.path) else {
            throw AgentRecoveryError(code: .storeNotFound, message: "no recovery store at \(url.path)")
        }
        let store = try readOnly ? AgentStructuredRecoveryStore(readingAt: url) : AgentStructuredRecoveryStore(directory: url)
        let provider: any AuthProvider
        if let binding = parsed.options["--binding"] {
            provider = BindingOnlyAuthProvider(binding: binding)
        } else if let signedIn = try CLIAuth.provider(
            store: CLIAuth.storeDirectory(parsed.options["--secrets"]), codexHome: parsed.options["--codex-home"], http: DefaultHTTPClient(), readOnly: readOnly
        ) {
            provider = signedIn
        } else {
            throw AgentRuntimeError(code: .notSignedIn, message: "not signed in; pass --binding to act for a retained account binding")
        }
        let binding: String
        if let current = await provider.currentBinding() {
            binding = current
        } else {
            binding = try await provider.credentials().binding
        }
        let recovery = AgentStructuredRecovery(configuration: .init(endpoint: .chatGPT), httpClient: DefaultHTTPClient(), authProvider: provider)
        return Context(store: store, recovery: recovery, binding: binding, json: parsed.has("--json"))
    }

    /// Parses, builds the context and runs `body`, mapping errors to exit statuses (64 usage, 1 failure).
    static func execute<Command: CLICommand>(
        _ command: Command.Type, _ arguments: [String], positionals: Int, readOnly: Bool = false,
        validate check: (ParsedArguments) throws -> Void = { _ in }, _ body: (ParsedArguments, Context) async throws -> Void
    ) async -> Int32 {
        // Every usage check runs before the store is opened or credentials are read.
        let validate: (ParsedArguments) throws -> Void = { parsed in
            guard parsed.positionals.count == positionals else {
                throw UsageError(positionals == 1 ? "expected one operation ID" : "unexpected argument '\(parsed.positionals.first ?? "")'")
            }
            if positionals == 1 { _ = try handle(parsed) }
            try check(parsed)
        }
        return await command.runParsed(arguments, validate: validate) { parsed in
            try await body(parsed, try await context(parsed, readOnly: readOnly))
        }
    }

    static func handle(_ parsed: ParsedArguments) throws -> AgentStructuredRecoveryHandle {
        guard let text = parsed.positionals.first, let id = UUID(uuidString: text) else { throw UsageError("the operation ID must be a UUID") }
        return AgentStructuredRecoveryHandle(operationID: id)
    }

    /// A suggested action named as what performs it: a `codexctl` command where there is one, else the
    /// host API call.
    static func command(for action: AgentStructuredRecoveryStatus.SuggestedAction, operation: UUID) -> String {
        let id = operation.uuidString.lowercased()
        switch action {
        case .acknowledge: return "codexctl recovery ack \(id)"
        case .abandon: return "codexctl recovery abandon \(id)"
        case .readReceipt: return "codexctl recovery receipt \(id)"
        case .signIn: return "codexctl auth login"
        case .execute, .resume: return "\(action.rawValue) (the host's sendRecovering)"
        case .manualRetry: return "manualRetry (the host's retryStructuredRecovery)"
        case .wait: return "wait"
        }
    }

    static func printJSON(_ value: JSONValue) {
        Console.exactLine(value.canonicalString())
    }
}

/// Answers account checks for one retained binding; it has no token and never authenticates a request.
struct BindingOnlyAuthProvider: AuthProvider {
    let binding: String
    func credentials() async throws -> AuthCredentials { AuthCredentials(bearerToken: "", binding: binding) }
    func recoverAfterUnauthorized(_ rejected: AuthCredentials) async throws -> AuthCredentials? { nil }
    func currentBinding() async -> String? { binding }
}

/// `codexctl recovery list`.
enum RecoveryListCommand: CLICommand {
    static let name = "list"
    static let summary = "List the account's operations, unreadable records and disposed operations."
    static let help = CommandHelp(
        command: "recovery list",
        overview: "List the account's operations: readable, unreadable (left untouched for reconciliation) and disposed.",
        options: [.value("--scope", "scope", "Only this host scope.")] + RecoveryCommand.commonOptions
    )

    static func run(_ arguments: [String]) async -> Int32 {
        return await RecoveryCommand.execute(Self.self, arguments, positionals: 0, readOnly: true) { parsed, context in
            let inventory = try context.store.inventory(binding: context.binding, scope: parsed.options["--scope"])
            func ids(_ list: [UUID]) -> [JSONValue] { list.map { .string($0.uuidString.lowercased()) } }
            if context.json {
                RecoveryCommand.printJSON([
                    "operations": .array(ids(inventory.operationIDs)), "unreadable": .array(ids(inventory.unreadableOperationIDs)),
                    "disposed": .array(ids(inventory.disposedOperationIDs)),
                    "problems": .array(inventory.problems.map { ["path": .string($0.path), "code": .string($0.code.rawValue), "message": .string($0.message)] }),
                ])
                return
            }
            for id in inventory.operationIDs { Console.line("\(id.uuidString.lowercased())  operation") }
            for id in inventory.unreadableOperationIDs { Console.line("\(id.uuidString.lowercased())  unreadable") }
            for id in inventory.disposedOperationIDs { Console.line("\(id.uuidString.lowercased())  disposed") }
            for problem in inventory.problems {
                Console.line("\(Console.display(problem.path))  \(problem.code.rawValue): \(Console.display(problem.message))")
            }
            let count = inventory.operationIDs.count
            Console.line("\(count) \(count == 1 ? "operation" : "operations"), \(inventory.unreadableOperationIDs.count) unreadable, \(inventory.disposedOperationIDs.count) disposed")
        }
    }
}

/// `codexctl recovery status`.
enum RecoveryStatusCommand: CLICommand {
    static let name = "status"
    static let summary = "Show one operation's status."
    static let help = CommandHelp(
        command: "recovery status",
        overview: "Show one operation's state, availability, blockers, attempts and suggested actions.",
        arguments: [RecoveryCommand.operationArgument], options: RecoveryCommand.commonOptions
    )

    static func run(_ arguments: [String]) async -> Int32 {
        return await RecoveryCommand.execute(Self.self, arguments, positionals: 1, readOnly: true) { parsed, context in
            let status = try await context.recovery.status(try RecoveryCommand.handle(parsed), store: context.store)
            let value: JSONValue = [
                "operation_id": .string(status.operationID.uuidString.lowercased()), "state": .string(status.state.rawValue),
                "availability": .string(status.availability.rawValue), "blockers": .array(status.blockers.map { .string($0.rawValue) }),
                "has_saved_completion": .bool(status.hasSavedCompletion), "attempts_used": .number(JSONNumber(status.attemptsUsed)),
                "maximum_attempts": .number(JSONNumber(status.maximumAttempts)),
                "next_attempt_at": status.nextAttemptAt.map { .string(ISO8601DateFormatter().string(from: $0)) } ?? .null,
                "last_failure": status.lastFailure.map { .string($0.code) } ?? .null,
                "suggested_actions": .array(status.suggestedActions.map { .string($0.rawValue) }), "redacted": .bool(status.isRedacted),
            ]
            if context.json {
                RecoveryCommand.printJSON(value)
                return
            }
            Console.line("operation     \(status.operationID.uuidString.lowercased())")
            Console.line("state         \(status.state.rawValue) (\(status.availability.rawValue))")
            Console.line("attempts      \(status.attemptsUsed) of \(status.maximumAttempts)")
            Console.line("completion    \(status.hasSavedCompletion ? "saved" : "none")")
            if !status.blockers.isEmpty { Console.line("blockers      \(status.blockers.map(\.rawValue).joined(separator: ", "))") }
            if let failure = status.lastFailure { Console.line("last failure  \(failure.code)") }
            Console.line("suggested     \(status.suggestedActions.map { RecoveryCommand.command(for: $0, operation: status.operationID) }.joined(separator: "; "))")
        }
    }
}

/// `codexctl recovery receipt`.
enum RecoveryReceiptCommand: CLICommand {
    static let name = "receipt"
    static let summary = "Print one operation's saved, validated result."
    static let help = CommandHelp(
        command: "recovery receipt",
        overview: "Print one operation's saved, validated result: its exact JSON bytes, except that characters that could act on a terminal are written as \\u escapes (the same JSON value); with --json the receipt's metadata too.",
        arguments: [RecoveryCommand.operationArgument], options: RecoveryCommand.commonOptions
    )

    static func run(_ arguments: [String]) async -> Int32 {
        return await RecoveryCommand.execute(Self.self, arguments, positionals: 1, readOnly: true) { parsed, context in
            let receipt = try await context.recovery.receipt(try RecoveryCommand.handle(parsed), store: context.store)
            guard context.json else {
                Console.jsonLine(String(decoding: receipt.payload, as: UTF8.self))
                return
            }
            RecoveryCommand.printJSON([
                "operation_id": .string(receipt.operationID.uuidString.lowercased()),
                "payload": (try? JSONValue(parsing: receipt.payload)) ?? .null, "format": .string(receipt.format.name),
                "contract_version": receipt.contractVersion.map(JSONValue.string) ?? .null,
                "completed_at": receipt.completedAt.map { .string(ISO8601DateFormatter().string(from: $0)) } ?? .null,
            ])
        }
    }
}

/// A `codexctl recovery` subcommand that acts on one operation and prints one word when done.
protocol RecoveryOperationCommand: CLICommand {
    /// What is printed on success.
    static var done: String { get }
    /// Whether the command acts only on the acting account's operations. The library lets a host abandon,
    /// cancel or suspend an operation whatever its account (the way out after an account change); the
    /// command acts for one account, so another account's operation is `account_mismatch` unless its
    /// own `--binding` is given.
    static var actsForItsAccountOnly: Bool { get }
    /// Performs the action.
    static func act(_ recovery: AgentStructuredRecovery, _ handle: AgentStructuredRecoveryHandle, _ store: AgentStructuredRecoveryStore) async throws
}

extension RecoveryOperationCommand {
    static func run(_ arguments: [String]) async -> Int32 {
        return await RecoveryCommand.execute(Self.self, arguments, positionals: 1) { parsed, context in
            let handle = try RecoveryCommand.handle(parsed)
            // Redacted status is another account's operation (a saved sign-in blocker of the account's own
            // operation is not: abandoning is its way out).
            if actsForItsAccountOnly, try await context.recovery.status(handle, store: context.store).isRedacted {
                throw AgentRecoveryError(
                    code: .accountMismatch, message: "the operation belongs to another account: give its --binding to act for it", operationID: handle.operationID
                )
            }
            try await act(context.recovery, handle, context.store)
            if context.json {
                RecoveryCommand.printJSON(["operation_id": .string(handle.operationID.uuidString.lowercased()), "result": .string(done)])
            } else {
                Console.line(done)
            }
        }
    }

    /// The help page of a one-operation command.
    static func page(_ overview: String) -> CommandHelp {
        CommandHelp(command: "recovery \(name)", overview: overview, arguments: [RecoveryCommand.operationArgument], options: RecoveryCommand.commonOptions)
    }
}

/// `codexctl recovery ack`.
enum RecoveryAckCommand: RecoveryOperationCommand {
    static let name = "ack"
    static let summary = "Acknowledge a saved result after the host committed it."
    static let help = page("Acknowledge a saved result. Only after the host committed it: the saved request and result are removed.")
    static let done = "acknowledged"
    static let actsForItsAccountOnly = false  // the library checks the account itself
    static func act(_ recovery: AgentStructuredRecovery, _ handle: AgentStructuredRecoveryHandle, _ store: AgentStructuredRecoveryStore) async throws {
        try await recovery.acknowledge(handle, store: store)
    }
}

/// `codexctl recovery abandon`.
enum RecoveryAbandonCommand: RecoveryOperationCommand {
    static let name = "abandon"
    static let summary = "Abandon an operation (stops generation, removes content, keeps a marker)."
    static let help = page("Abandon an idle operation of the account acted for: no further generation, content removed, a marker kept. Another account's operation is account_mismatch: give its --binding to act for it.")
    static let done = "abandoned"
    static let actsForItsAccountOnly = true
    static func act(_ recovery: AgentStructuredRecovery, _ handle: AgentStructuredRecoveryHandle, _ store: AgentStructuredRecoveryStore) async throws {
        try await recovery.abandon(handle, store: store)
    }
}

/// `codexctl recovery cancel`.
enum RecoveryCancelCommand: RecoveryOperationCommand {
    static let name = "cancel"
    static let summary = "Cancel an operation permanently."
    static let help = page("Cancel an operation of the account acted for permanently (also while another process runs it). Another account's operation is account_mismatch: give its --binding to act for it.")
    static let done = "cancelled"
    static let actsForItsAccountOnly = true
    static func act(_ recovery: AgentStructuredRecovery, _ handle: AgentStructuredRecoveryHandle, _ store: AgentStructuredRecoveryStore) async throws {
        try await recovery.cancel(handle, store: store)
    }
}

/// `codexctl recovery suspend`.
enum RecoverySuspendCommand: RecoveryOperationCommand {
    static let name = "suspend"
    static let summary = "Suspend an operation (keeps its budget)."
    static let help = page("Suspend an operation of the account acted for, keeping its budget (also while another process runs it). Another account's operation is account_mismatch: give its --binding to act for it.")
    static let done = "suspend requested"
    static let actsForItsAccountOnly = true
    static func act(_ recovery: AgentStructuredRecovery, _ handle: AgentStructuredRecoveryHandle, _ store: AgentStructuredRecoveryStore) async throws {
        try await recovery.suspend(handle, store: store)
    }
}

/// `codexctl recovery purge`.
enum RecoveryPurgeCommand: CLICommand {
    static let name = "purge"
    static let summary = "Remove the account's idle operations (optionally one scope)."
    static let help = CommandHelp(
        command: "recovery purge",
        overview: "Remove the account's idle operations (records, commands, markers; lock files stay). Busy and unreadable ones are reported.",
        options: [.value("--scope", "scope", "Only this host scope.")] + RecoveryCommand.commonOptions
    )

    static func run(_ arguments: [String]) async -> Int32 {
        return await RecoveryCommand.execute(Self.self, arguments, positionals: 0) { parsed, context in
            RecoveryCleanupCommand.report(try context.store.purgeAccount(context.binding, scope: parsed.options["--scope"]), json: context.json)
        }
    }
}

/// `codexctl recovery cleanup`.
enum RecoveryCleanupCommand: CLICommand {
    static let name = "cleanup"
    static let summary = "Remove disposition markers older than a date."
    static let help = CommandHelp(
        command: "recovery cleanup",
        overview: "Remove disposition markers written before a date whose content is already gone.",
        options: [.value("--before", "date", "Remove markers older than this (e.g. 2026-11-01T00:00:00Z).", required: true)] + RecoveryCommand.commonOptions
    )

    static func run(_ arguments: [String]) async -> Int32 {
        let date: @Sendable (ParsedArguments) throws -> Date = { parsed in
            guard let text = parsed.options["--before"], let date = ISO8601DateFormatter().date(from: text) else {
                throw UsageError("--before needs an ISO-8601 date such as 2026-11-01T00:00:00Z")
            }
            return date
        }
        return await RecoveryCommand.execute(Self.self, arguments, positionals: 0, validate: { _ = try date($0) }) { parsed, context in
            let date = try date(parsed)
            report(try context.store.cleanupDisposed(before: date, for: context.binding), json: context.json)
        }
    }

    static func report(_ result: AgentRecoveryCleanupResult, json: Bool) {
        let skipped = result.skipped.sorted { $0.key.uuidString < $1.key.uuidString }
        if json {
            RecoveryCommand.printJSON([
                "removed": .array(result.removed.map { .string($0.uuidString.lowercased()) }),
                "skipped": .object(JSONObject(skipped.map { ($0.key.uuidString.lowercased(), JSONValue.string($0.value.rawValue)) })),
            ])
            return
        }
        for id in result.removed { Console.line("\(id.uuidString.lowercased())  removed") }
        for (id, reason) in skipped { Console.line("\(id.uuidString.lowercased())  skipped (\(reason.rawValue))") }
        Console.line("\(result.removed.count) removed, \(result.skipped.count) skipped")
    }
}
