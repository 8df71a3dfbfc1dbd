// `RuntimeFixture durable …`: a host that runs (or resumes) the durable-turn script against the test's
// loopback server and can be killed at a chosen journal boundary.
//   durable --db PATH --server URL --thread ID --runs FILE --effects FILE --authorizations FILE
//           [--resume] [--kill-at SEQUENCE] [--kill-in-charge] [--unfinished run_again|report_unknown_outcome]
// Exit status: 0 the turn completed, 3 it parked for an approval, 4 thread_busy, 1 any other failure.
import CodexCore
import CodexRecovery
import CodexRuntime
import CodexSchema
import CodexStorageSQLite
import CodexTransport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

enum DurableTurn {
    /// Appends `line` to `path` and syncs it (the log survives the SIGKILL that may follow).
    static func append(_ line: String, to path: String) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        fsync(descriptor)
    }

    static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    static func tools(runs: String, effects: String, killInCharge: Bool) -> [AgentTool] {
        [
            AgentTool(definition: ToolDefinition(
                name: "lookup_order", description: "Read an order.", inputSchema: ["type": "object"], supportsParallelExecution: true, replaySafety: .idempotent
            )) { _, context in
                append("lookup_order \(context.idempotencyKey)", to: runs)
                return context.success("order A-1: paid")
            },
            AgentTool(definition: ToolDefinition(name: "charge_card", description: "Charge the card.", inputSchema: ["type": "object"])) { _, context in
                append("charge_card \(context.idempotencyKey)", to: runs)
                // What a payment API does with an idempotency key: the same key charges once.
                if !lines(effects).contains(context.idempotencyKey) { append(context.idempotencyKey, to: effects) }
                if killInCharge { kill(getpid(), SIGKILL) }
                return context.success("charged 1299")
            },
            AgentTool(definition: ToolDefinition(
                name: "refund_order", description: "Refund part of an order.", inputSchema: ["type": "object"], approvalPolicy: .requiresApproval
            )) { _, context in
                append("refund_order \(context.idempotencyKey)", to: runs)
                return context.success("refunded 300")
            },
        ]
    }

    static func run(_ option: (String) -> String?, flag: (String) -> Bool) async throws -> Int32 {
        guard let path = option("--db"), let server = option("--server").flatMap(URL.init(string:)), let threadText = option("--thread"),
              let runs = option("--runs"), let effects = option("--effects"), let authorizations = option("--authorizations") else {
            throw AgentRuntimeError(code: .invalidRequest, message: "usage: durable --db PATH --server URL --thread ID --runs F --effects F --authorizations F")
        }
        if let killAt = option("--kill-at").flatMap(Int.init) {
            TurnJournalHooks.install { _, sequence in if sequence == killAt { kill(getpid(), SIGKILL) } }
        }
        let unfinished: AgentTurnRecoveryPolicy.UnfinishedCall = option("--unfinished") == "report_unknown_outcome" ? .reportUnknownOutcome : .runAgain
        let store = try SQLiteRuntimeStateStore(path: path)
        var configuration = CodexResponsesBackendConfiguration(model: .gpt6Astra)
        configuration.endpoint = try ResponsesEndpoint(baseURL: server, profile: .publicAPI)
        var retry = configuration.retryPolicy
        retry.maximumAttempts = 1
        configuration.retryPolicy = retry
        let runtime = try AgentRuntime(configuration: .init(
            backend: CodexResponsesBackend(configuration: configuration, authProvider: APIKeyAuthProvider(apiKey: "sk-durable")), stateStore: store,
            tools: tools(runs: runs, effects: effects, killInCharge: flag("--kill-in-charge")),
            turnRecovery: .resume(unfinishedCalls: unfinished) { attempt in
                append("\(attempt.number) \(attempt.id.uuidString)", to: authorizations)
                return true
            }
        ))
        let threadID = AgentThreadID(rawValue: threadText)
        do {
            if flag("--resume") {
                guard let turn = try await store.latestTurn(of: threadID) else { return 1 }
                let execution = try await runtime.resumeTurn(turn.id, in: threadID)
                for try await _ in execution.events {}
            } else {
                if try await store.thread(threadID) == nil { try await store.upsertThread(AgentThread(id: threadID, title: "durable")) }
                _ = try await runtime.send(Request(text: "Charge then refund A-1"), in: threadID)
            }
        } catch let error as AgentRuntimeError where error.code == .turnWaitingForApproval {
            return 3
        } catch let error as AgentRuntimeError where error.code == .threadBusy {
            return 4
        }
        return 0
    }
}
