import CodexCore
@testable import CodexRuntime
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Synchronization
import Testing

/// A journal write that fails (a full disk, an I/O error) ends the turn with a typed error, loses
/// nothing already committed, and leaves the turn to be resumed once the store works again.
@Suite(.timeLimit(.minutes(5 * Sanitizer.slowdown))) struct DurableTurnFaultTests {
    /// The SQLite store with the `failing`-th journal append (0-based) failing as a full disk or an I/O
    /// error until ``clear()``; every other call goes straight through.
    final class FaultyStore: ForwardingStateStore, TurnJournaling, RuntimeOwnerLeasing {
        let sqlite: SQLiteRuntimeStateStore
        var base: any RuntimeStateStore { sqlite }
        let failing: Int
        let fault: SQLiteStoreError
        private let state = Mutex((appends: 0, cleared: false))

        init(_ base: SQLiteRuntimeStateStore, failing: Int, fault: SQLiteStoreError) {
            sqlite = base
            self.failing = failing
            self.fault = fault
        }

        func clear() { state.withLock { $0.cleared = true } }

        func appendJournal(_ entry: TurnJournalEntry, sequence: Int, turn: AgentTurnID, thread: AgentThreadID) async throws {
            let fails = state.withLock { state -> Bool in
                defer { state.appends += 1 }
                return !state.cleared && state.appends >= failing
            }
            if fails { throw fault }
            try await sqlite.appendJournal(entry, sequence: sequence, turn: turn, thread: thread)
        }

        func recordTurn(_ turn: AgentTurn, appending history: [AgentHistoryItem], threadStatus: AgentThreadStatus, at date: Date) async throws {
            try await sqlite.recordTurn(turn, appending: history, threadStatus: threadStatus, at: date)
        }
        func journal(of turn: AgentTurnID) async throws -> [TurnJournalEntry] { try await sqlite.journal(of: turn) }
        func claimTurn(_ turn: AgentTurnID, of thread: AgentThreadID, from expected: String?, to owner: String, at date: Date) async throws -> Bool {
            try await sqlite.claimTurn(turn, of: thread, from: expected, to: owner, at: date)
        }
        func saveApproval(_ approval: StoredApproval) async throws { try await sqlite.saveApproval(approval) }
        func approval(_ id: AgentApprovalID) async throws -> StoredApproval? { try await sqlite.approval(id) }
        func approvals(in thread: AgentThreadID?) async throws -> [StoredApproval] { try await sqlite.approvals(in: thread) }
        func answerApproval(_ id: AgentApprovalID, decision: AgentApprovalDecision, expectedDigest: String?, at date: Date) async throws -> StoredApproval {
            try await sqlite.answerApproval(id, decision: decision, expectedDigest: expectedDigest, at: date)
        }
        func acquireOwnerLease() throws -> (any RuntimeOwnerLease)? { try sqlite.acquireOwnerLease() }
        func isOwnerLeaseHeld(_ ownerID: String) throws -> Bool { try sqlite.isOwnerLeaseHeld(ownerID) }
    }

    static let faults: [(String, SQLiteStoreError)] = [
        ("ENOSPC", SQLiteStoreError(code: .diskFull, resultCode: 13, message: "cannot write the database: No space left on device")),
        ("EIO", SQLiteStoreError(code: .ioFailure, resultCode: 10, message: "cannot write the database: Input/output error")),
    ]

    @Test(arguments: Array(0...12))
    func aJournalWriteThatFailsEndsTheTurnTypedAndAResumeAfterTheFaultCompletesIt(_ failing: Int) async throws {
        for (name, fault) in Self.faults {
            let directory = try temporaryDirectory("durable-fault")
            defer { try? FileManager.default.removeItem(at: directory) }
            let server = try LoopbackHTTPServer(handler: DurableTurnScript.reply)
            defer { server.shutdown() }
            let store = FaultyStore(try SQLiteRuntimeStateStore(path: directory.appendingPathComponent("state.sqlite").path), failing: failing, fault: fault)
            let inbox = ApprovalInbox()
            let approvals = Task { for await request in inbox.requests { inbox.resolve(request.id, .approved) } }
            defer { approvals.cancel() }
            let log = DurableTurnTests.ToolLog()
            let runtime = try DurableTurnTests.runtime(store, server, log, presenter: inbox)
            let thread = try await runtime.createThread().id
            do {
                let answer = try await runtime.send(Request(text: "Charge then refund A-1"), in: thread)
                // Only the journal's last word, written after the commit, may fail without the turn noticing.
                #expect(failing == 12 && answer == DurableTurnScript.answer, "\(name) at \(failing): the turn completed")
            } catch let error as AgentRuntimeError {
                #expect(error.code == .storageFailure, "\(name) at \(failing): \(error)")
                #expect(error.message.hasSuffix(fault.description), "\(name) at \(failing): the store's cause is in the message: \(error.message)")
                let turn = try #require(try await store.latestTurn(of: thread))
                let committed = DurableTurnTests.describe(try await DurableTurnTests.history(store, thread))
                if failing == 0 {
                    // The turn's first entry was never written: it cannot be resumed; it is recorded failed
                    // with its input kept.
                    #expect(turn.status == .failed)
                    #expect(committed == ["event turn_started", "user: Charge then refund A-1", "event turn_failed"])
                    continue
                }
                #expect(DurableTurnTests.uninterrupted.starts(with: committed), "\(name) at \(failing): nothing committed was lost or changed: \(committed)")
                #expect(turn.status == .running, "\(name) at \(failing): left to resume")
                store.clear()
                let execution = try await runtime.resumeTurn(turn.id, in: thread)
                for try await _ in execution.events {}
            }
            // A result whose entry failed was never recorded: the idempotent lookup runs again, the charge
            // and the refund are reported as unknown outcomes (the policy's default); nothing else differs.
            var expected = DurableTurnTests.uninterrupted
            var runs = ["lookup_order": 1, "charge_card": 1, "refund_order": 1]
            let unknown = "failure The outcome of this call is unknown: the process running it stopped before it finished, and it may or may not have taken effect."
            switch failing {
            case 4: runs["lookup_order"] = 2
            case 6: expected[7] = "result call_charge " + unknown
            case 10: expected[8] = "result call_refund " + unknown
            default: break
            }
            #expect(DurableTurnTests.describe(try await DurableTurnTests.history(store, thread)) == expected, "\(name) at \(failing)")
            #expect(log.counts == runs, "\(name) at \(failing): \(log.counts)")
            #expect(try await store.latestTurn(of: thread)?.status == .completed)
            #expect(try await store.approvals(in: thread).count == 1, "\(name) at \(failing): the approval was asked once")
        }
    }
}
