import CodexCore
import CodexSchema
import CodexStoragePostgres
import CodexStorageSQLite
import Foundation

/// `codexctl approvals`: the approvals durable turns asked for, answered from any process.
enum ApprovalsCommand: CLICommand {
    static let name = "approvals"
    static let summary = "List, show, approve or deny the approvals durable turns wait for."
    static let help = CommandHelp(
        command: "approvals",
        overview: """
        The approvals durable turns asked for, kept in the state store: answer one from here while the turn is parked, \
        or after its process stopped; the turn continues when its host resumes it.
        """,
        subcommands: subcommandRows
    )
    static var subcommands: [any CLICommand.Type] { [List.self, Show.self, Approve.self, Deny.self] }
    static func run(_ arguments: [String]) async -> Int32 { await dispatch(arguments) }

    /// One approval as the commands print it.
    static func object(_ approval: StoredApproval) -> JSONValue {
        let call = approval.request.toolInvocation
        return [
            "id": .string(approval.id.rawValue), "thread_id": .string(approval.request.threadID.rawValue),
            "turn_id": .string(approval.request.turnID.rawValue), "tool": .string(call.toolName), "call_id": .string(call.id.rawValue),
            "arguments": .string(call.arguments), "title": .string(approval.request.title),
            "message": approval.request.message.map(JSONValue.string) ?? .null, "digest": .string(approval.digest),
            "requested_at": .string(ISO8601DateFormatter().string(from: approval.requestedAt)),
            "decision": approval.decision.map { .string($0.rawValue) } ?? .null,
            "answered_at": approval.answeredAt.map { .string(ISO8601DateFormatter().string(from: $0)) } ?? .null,
        ]
    }

    /// One line of `list`: `<id>  pending  <tool>  thread <id>`.
    static func line(_ approval: StoredApproval) -> String {
        let state = approval.decision?.rawValue ?? "pending"
        return "\(approval.id.rawValue)  \(state)  \(Console.display(approval.request.toolInvocation.toolName))  thread \(approval.request.threadID.rawValue)"
    }

    /// The approval named by the first argument.
    static func approval(_ parsed: ParsedArguments, in store: any CLIStateStore) async throws -> StoredApproval {
        guard let approval = try await store.approval(AgentApprovalID(rawValue: parsed.positionals[0])) else {
            throw AgentRuntimeError(code: .approvalNotFound, message: "no such approval")
        }
        return approval
    }

    enum List: CLICommand {
        static let name = "list"
        static let summary = "List approvals, oldest first."
        static let help = CommandHelp(
            command: "approvals list",
            overview: "List the approvals of every thread (or one), oldest first; the store is opened read-only.",
            options: [
                StorageCommandSupport.dbOption, .value("--thread", "id", "Only this thread's."), .flag("--pending", "Only those still waiting."),
                .flag("--json", "Print one JSON array."),
            ]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            await StorageCommandSupport.execute(Self.self, arguments, positionals: 0) { parsed in
                let store = try await StorageCommandSupport.readOnlyStore(parsed)
                var approvals = try await store.approvals(in: parsed.options["--thread"].map(AgentThreadID.init(rawValue:)))
                if parsed.has("--pending") { approvals = approvals.filter(\.isPending) }
                if parsed.has("--json") {
                    Console.exactLine(JSONValue.array(approvals.map(ApprovalsCommand.object)).compactString())
                    return
                }
                for approval in approvals { Console.line(ApprovalsCommand.line(approval)) }
                Console.line(approvals.count == 1 ? "1 approval" : "\(approvals.count) approvals")
            }
        }
    }

    enum Show: CLICommand {
        static let name = "show"
        static let summary = "Show one approval: the call, its arguments, its digest and its answer."
        static let help = CommandHelp(
            command: "approvals show",
            overview: "Show one approval (the store is opened read-only).",
            arguments: [("<approval-id>", "The approval's ID.")],
            options: [StorageCommandSupport.dbOption, .flag("--json", "Print one JSON object.")]
        )
        static func run(_ arguments: [String]) async -> Int32 {
            await StorageCommandSupport.execute(Self.self, arguments, positionals: 1) { parsed in
                let approval = try await ApprovalsCommand.approval(parsed, in: try await StorageCommandSupport.readOnlyStore(parsed))
                if parsed.has("--json") {
                    Console.exactLine(ApprovalsCommand.object(approval).compactString())
                    return
                }
                let call = approval.request.toolInvocation
                Console.line("id         \(approval.id.rawValue)")
                Console.line("state      \(approval.decision?.rawValue ?? "pending")")
                Console.line("tool       \(Console.display(call.toolName)) (call \(Console.display(call.id.rawValue)))")
                Console.line("arguments  \(Console.display(call.arguments))")
                if let message = approval.request.message { Console.line("message    \(Console.display(message))") }
                Console.line("thread     \(approval.request.threadID.rawValue), turn \(approval.request.turnID.rawValue)")
                Console.line("digest     \(approval.digest)")
            }
        }
    }

    /// `approve` and `deny`: answer once; the same answer again succeeds, another is refused.
    static func answer(_ decision: AgentApprovalDecision, _ parsed: ParsedArguments) async throws {
        let store = try await StorageCommandSupport.store(parsed)
        let id = AgentApprovalID(rawValue: parsed.positionals[0])
        let answered: StoredApproval
        do {
            answered = try await store.answerApproval(id, decision: decision, expectedDigest: parsed.options["--digest"], at: Date())
        } catch let error as SQLiteStoreError where error.code == .constraint {
            throw AgentRuntimeError(code: .approvalStale, message: error.message)
        } catch let error as PostgresStoreError where error.code == .constraint {
            throw AgentRuntimeError(code: .approvalStale, message: error.message)
        }
        if parsed.has("--json") {
            Console.exactLine(object(answered).compactString())
        } else {
            Console.line("\(decision.rawValue) \(answered.id.rawValue); the turn continues when its host resumes it")
        }
    }

    static let answerOptions: [CLIOption] = [
        StorageCommandSupport.dbOption,
        .value("--digest", "digest", "Answer only if the approval was asked for this digest (from 'approvals show')."),
        .flag("--json", "Print the answered approval as one JSON object."),
    ]

    enum Approve: CLICommand {
        static let name = "approve"
        static let summary = "Approve a pending approval."
        static let help = CommandHelp(
            command: "approvals approve",
            overview: "Approve a pending approval (the store must exist; it is opened for writing). Answering it the same way again is fine; the other way is refused.",
            arguments: [("<approval-id>", "The approval's ID.")],
            options: ApprovalsCommand.answerOptions
        )
        static func run(_ arguments: [String]) async -> Int32 {
            await StorageCommandSupport.execute(Self.self, arguments, positionals: 1) { parsed in try await ApprovalsCommand.answer(.approved, parsed) }
        }
    }

    enum Deny: CLICommand {
        static let name = "deny"
        static let summary = "Deny a pending approval."
        static let help = CommandHelp(
            command: "approvals deny",
            overview: "Deny a pending approval: the model receives a denied result for the call when the turn resumes.",
            arguments: [("<approval-id>", "The approval's ID.")],
            options: ApprovalsCommand.answerOptions
        )
        static func run(_ arguments: [String]) async -> Int32 {
            await StorageCommandSupport.execute(Self.self, arguments, positionals: 1) { parsed in try await ApprovalsCommand.answer(.denied, parsed) }
        }
    }
}
