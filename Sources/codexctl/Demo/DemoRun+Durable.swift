import CodexCore
import CodexLoopback
import CodexRuntime
import CodexSchema
import CodexStorageSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension DemoRun {
    /// The durable step's files (the payment service's ledger, every tool run, what each worker saw).
    var durableDirectory: URL { directory.appendingPathComponent("durable") }

    /// Step 8: a durable turn run by real worker processes. The first is killed with SIGKILL inside the
    /// charge tool, after the card was charged and before the result was recorded; a second resumes the
    /// turn, runs the charge again with the same idempotency key (the payment service charges once), and
    /// parks at the receipt's approval; another `codexctl` process approves; a third worker finishes.
    func durableTurn(_ server: DemoServer) async throws {
        narrator.step(8, "A durable turn: its process is killed inside a tool, another resumes it, the charge happens once")
        try FileManager.default.createDirectory(at: durableDirectory, withIntermediateDirectories: true)
        let ledger = DemoLedger(directory: durableDirectory)
        let store = try SQLiteRuntimeStateStore(path: databasePath)
        let thread = try await makeRuntime(server).createThread(title: "Order A-2")
        let requestsBefore = server.seen.durableRequests
        let worker = ["demo", DemoDurableWorker.name, "--db", databasePath, "--base-url", server.baseURL.absoluteString,
                      "--thread", thread.id.rawValue, "--files", durableDirectory.path]

        let first = try await Self.runChild(worker + ["--start", "--die-in-charge"])
        guard first.killed, first.status == SIGKILL, let turn = try await store.latestTurn(of: thread.id) else {
            throw Self.stepFailure("the first worker was not killed inside the charge (\(first.killed ? "signal" : "status") \(first.status))")
        }
        let key = ledger.lines(DemoLedger.payments).first?.split(separator: " ").first.map(String.init) ?? "?"
        let journal = try await store.journal(of: turn.id).map(\.kind)
        narrator.say("killed", "worker 1 started the turn; the model asked to charge the card; the payment service took charge \(key); "
            + "the worker was killed with SIGKILL inside the tool", ["idempotency_key": .string(key), "signal": .number(JSONNumber(Int(first.status)))])
        narrator.say("journal", "the store: turn \(turn.status.rawValue), its journal \(journal.joined(separator: ", "))",
                     ["status": .string(turn.status.rawValue), "journal": .array(journal.map { .string($0) })])

        let second = try await Self.runChild(worker + ["--resume"])
        guard !second.killed, second.status == DemoDurableWorker.parked, let pending = try await store.approvals(in: thread.id).first(where: \.isPending) else {
            throw Self.stepFailure("the second worker did not park at the approval (\(second.killed ? "signal" : "status") \(second.status))")
        }
        let resumedAt = (ledger.lines(DemoLedger.workers).last ?? "").split(separator: " ").compactMap { Int($0) }
        let charges = ledger.lines(DemoLedger.toolRuns).filter { $0.hasPrefix("charge_card ") }
        let charged = ledger.lines(DemoLedger.payments).count
        narrator.say(
            "resumed", "worker 2 resumed the turn after model request \(resumedAt.first ?? 0) with \(resumedAt.last ?? 0) results reused; "
                + "charge_card ran again with the same key (\(charges.count) runs, \(Set(charges).count) key): the payment service charged \(Self.times(charged))",
            ["pass": .number(JSONNumber(resumedAt.first ?? 0)), "reused_results": .number(JSONNumber(resumedAt.last ?? 0)),
             "charge_runs": .number(JSONNumber(charges.count)), "charges": .number(JSONNumber(charged))]
        )
        narrator.say("parked", "the model asked to email the receipt, which needs approval; with no one to ask, the turn is "
            + "\((try await store.latestTurn(of: thread.id))?.status.rawValue ?? "?") and worker 2 exited", ["approval_id": .string(pending.id.rawValue)])

        let answer = try await Self.runChild(["approvals", "approve", pending.id.rawValue, "--db", databasePath])
        guard answer.succeeded else { throw Self.stepFailure("codexctl approvals approve failed (status \(answer.status))") }
        narrator.say("approved", "another process approved it: codexctl approvals approve \(pending.id.rawValue)")

        let third = try await Self.runChild(worker + ["--resume"])
        guard third.succeeded, let ended = try await store.latestTurn(of: thread.id) else {
            throw Self.stepFailure("the third worker did not finish the turn (\(third.killed ? "signal" : "status") \(third.status))")
        }
        let reply = try await store.history(of: thread.id, query: AgentHistoryQuery(limit: 100)).items.compactMap { item -> String? in
            if case .message(let message) = item, message.role == .assistant { message.text } else { nil }
        }.last ?? ""
        let receipts = ledger.lines(DemoLedger.toolRuns).filter { $0.hasPrefix("email_receipt ") }.count
        let requests = server.seen.durableRequests - requestsBefore
        narrator.say("durable_done", "worker 3 emailed the receipt and finished: \"\(reply)\"", ["status": .string(ended.status.rawValue)])
        narrator.say(
            "durable_counts", "turn \(ended.status.rawValue); card charged \(Self.times(ledger.lines(DemoLedger.payments).count)), receipt sent \(Self.times(receipts)); "
                + "the model was asked \(requests) times, once per step: no request was sent twice",
            ["charges": .number(JSONNumber(ledger.lines(DemoLedger.payments).count)), "receipts": .number(JSONNumber(receipts)),
             "requests": .number(JSONNumber(requests))]
        )
    }

    /// Runs this executable again with `arguments` (standard output discarded, errors shown) and waits
    /// for it without holding one of the runtime's threads.
    private static func runChild(_ arguments: [String]) async throws -> SpawnedProcess.Termination {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        return await (try SpawnedProcess(executable, arguments, stdout: .null, stderr: .inherited)).exit()
    }

    /// "once", "twice", "3 times".
    private static func times(_ count: Int) -> String {
        switch count {
        case 1: "once"
        case 2: "twice"
        default: "\(count) times"
        }
    }

    private static func stepFailure(_ message: String) -> CLIFailure.Thrown {
        CLIFailure.Thrown(code: "demo_step_failed", message: message)
    }
}
