import CodexCore
import CodexRecovery
import CodexRuntime
import CodexSchema
import CodexStorageSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `codexctl demo durable-worker …`: the host process of the demo's durable-turn step. The demo starts
/// it as a real child process (three times: to start the turn, and twice to resume it), so a crash is a
/// real SIGKILL of a real process. Not a command for direct use, and not listed in the help.
///
///     durable-worker --db PATH --base-url URL --thread ID --files DIR (--start | --resume) [--die-in-charge]
///
/// Exit status: 0 the turn completed, 3 it waits for an approval, 64 bad arguments, 1 any other failure.
/// What it saw (the resume point) is appended to `DIR/workers.log`.
enum DemoDurableWorker {
    static let name = "durable-worker"

    /// The exit status of a turn parked at an approval.
    static let parked: Int32 = 3

    struct Arguments {
        let databasePath: String
        let baseURL: URL
        let threadID: AgentThreadID
        let files: URL
        let resume: Bool
        let dieInCharge: Bool

        init?(_ arguments: [String]) {
            var values: [String: String] = [:]
            var flags: Set<String> = []
            var rest = arguments[...]
            while let argument = rest.popFirst() {
                switch argument {
                case "--db", "--base-url", "--thread", "--files":
                    guard let value = rest.popFirst() else { return nil }
                    values[argument] = value
                case "--start", "--resume", "--die-in-charge": flags.insert(argument)
                default: return nil
                }
            }
            guard let path = values["--db"], let base = values["--base-url"].flatMap(URL.init(string:)), let thread = values["--thread"],
                  let files = values["--files"], flags.contains("--start") != flags.contains("--resume") else { return nil }
            databasePath = path
            baseURL = base
            threadID = AgentThreadID(rawValue: thread)
            self.files = URL(fileURLWithPath: files)
            resume = flags.contains("--resume")
            dieInCharge = flags.contains("--die-in-charge")
        }
    }

    static func run(_ arguments: [String]) async -> Int32 {
        guard let arguments = Arguments(arguments) else {
            Console.error("usage: codexctl demo \(name) --db PATH --base-url URL --thread ID --files DIR (--start | --resume) [--die-in-charge]\n")
            return Console.Status.usage
        }
        do {
            return try await work(arguments)
        } catch let error as AgentRuntimeError where error.code == .turnWaitingForApproval {
            return parked
        } catch {
            CLIFailure(error).report(json: false)
            return Console.Status.failure
        }
    }

    private static func work(_ arguments: Arguments) async throws -> Int32 {
        let ledger = DemoLedger(directory: arguments.files)
        // A request cut short would be sent again only with the host's authorization; in this step none is.
        let runtime = try DemoRun.makeRuntime(
            baseURL: arguments.baseURL, databasePath: arguments.databasePath, tools: tools(ledger, dieInCharge: arguments.dieInCharge),
            turnRecovery: .resume(unfinishedCalls: .runAgain) { attempt in
                ledger.append("authorized attempt \(attempt.number)", to: DemoLedger.workers)
                return true
            }
        )
        let events: AgentEventStream<AgentEvent>
        if arguments.resume {
            let store = try SQLiteRuntimeStateStore(readingAt: arguments.databasePath)
            guard let turn = try await store.latestTurn(of: arguments.threadID) else {
                throw AgentRuntimeError(code: .turnNotResumable, message: "the thread has no turn")
            }
            events = try await runtime.resumeTurn(turn.id, in: arguments.threadID).events
        } else {
            events = try await runtime.stream(Request(text: DemoScript.durablePrompt), in: arguments.threadID)
        }
        for try await event in events {
            if case .progress(.resumed(let pass, let attempt, let reused)) = event {
                ledger.append("resumed pass \(pass) attempt \(attempt) reused \(reused)", to: DemoLedger.workers)
            }
        }
        return Console.Status.success
    }

    private struct Charge: Decodable, Sendable {
        let order_id: String
        let amount_cents: Int
    }

    private struct Receipt: Decodable, Sendable {
        let order_id: String
    }

    /// The step's two tools: a charge that is not safe to repeat blindly (the payment service
    /// deduplicates by the idempotency key), and a receipt that needs a person's approval.
    static func tools(_ ledger: DemoLedger, dieInCharge: Bool) -> [AgentTool] {
        let charge = AgentTool(
            name: "charge_card", description: "Charge the customer's card for an order.", input: Charge.self,
            schema: .object(properties: ["order_id": .string(), "amount_cents": .integer], required: ["order_id", "amount_cents"])
        ) { input, context in
            ledger.append("charge_card \(context.idempotencyKey)", to: DemoLedger.toolRuns)
            ledger.charge(idempotencyKey: context.idempotencyKey, amountCents: input.amount_cents)
            // The crash the step shows: the card is charged, the result not yet recorded.
            if dieInCharge { kill(getpid(), SIGKILL) }
            return context.success(DemoScript.chargeOutput)
        }
        let receipt = AgentTool(
            name: "email_receipt", description: "Email the customer a receipt for an order.", input: Receipt.self,
            schema: .object(properties: ["order_id": .string()], required: ["order_id"]), approvalPolicy: .requiresApproval
        ) { _, context in
            ledger.append("email_receipt \(context.idempotencyKey)", to: DemoLedger.toolRuns)
            return context.success(DemoScript.receiptOutput)
        }
        return [charge, receipt]
    }
}

/// The durable step's files, shared by its processes: what the payment service charged (one line per
/// idempotency key: the same key charges once, as a real payment API does), every tool run, and what
/// each worker saw. Each line is appended with `O_APPEND` and synced, so it survives the SIGKILL that may
/// follow.
struct DemoLedger: Sendable {
    static let payments = "payments.txt"
    static let toolRuns = "tool-runs.txt"
    static let workers = "workers.log"

    let directory: URL

    /// The lines of one of the files (none when it does not exist yet).
    func lines(_ file: String) -> [String] {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent(file)) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Charges once per key.
    func charge(idempotencyKey: String, amountCents: Int) {
        guard !lines(Self.payments).contains(where: { $0.hasPrefix(idempotencyKey + " ") }) else { return }
        append("\(idempotencyKey) \(amountCents)", to: Self.payments)
    }

    func append(_ line: String, to file: String) {
        let descriptor = open(directory.appendingPathComponent(file).path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        fsync(descriptor)
    }
}
