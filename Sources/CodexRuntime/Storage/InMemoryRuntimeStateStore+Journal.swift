public import CodexCore
public import Foundation
import Synchronization

extension InMemoryRuntimeStateStore: TurnJournaling {
    /// Appends `entry` as number `sequence` of `turn`'s journal (see ``CodexCore/TurnJournaling``).
    /// - Throws: ``CodexCore/AgentRuntimeError`` `thread_not_found`, or `storage_conflict` for another
    ///   entry under a taken number or a gap.
    public func appendJournal(_ entry: TurnJournalEntry, sequence: Int, turn: AgentTurnID, thread: AgentThreadID) async throws {
        try state.withLock { state throws(AgentRuntimeError) in
            guard state.threads[thread] != nil else { throw AgentRuntimeError(code: .threadNotFound, message: "no such thread") }
            var journal = state.journals[turn] ?? (thread, [])
            if sequence < journal.entries.count {
                guard journal.entries[sequence] == entry, journal.thread == thread else {
                    throw AgentRuntimeError(code: .storageConflict, message: "journal entry \(sequence) of the turn is already another entry")
                }
                return
            }
            guard sequence == journal.entries.count else {
                throw AgentRuntimeError(code: .storageConflict, message: "journal entry \(sequence) would leave a gap after \(journal.entries.count) entries")
            }
            journal.entries.append(entry)
            state.journals[turn] = journal
        }
    }

    /// `turn`'s journal, in order.
    public func journal(of turn: AgentTurnID) async throws -> [TurnJournalEntry] {
        state.withLock { $0.journals[turn]?.entries ?? [] }
    }

    /// Hands `turn` to `owner` when its owner is still `expected` (see ``CodexCore/TurnJournaling``).
    public func claimTurn(_ turn: AgentTurnID, of thread: AgentThreadID, from expected: String?, to owner: String, at date: Date) async throws -> Bool {
        state.withLock { state in
            guard var record = state.turns[thread]?.first(where: { $0.id == turn }), record.ownerID == expected,
                  record.status == .running || record.status == .waitingForApproval, var stored = state.threads[thread] else { return false }
            record.ownerID = owner
            record.status = .running
            state.upsert(record)
            stored.settle(.running, at: date)
            state.threads[thread] = stored
            return true
        }
    }

    /// Stores an approval asked for (the same request again changes nothing).
    /// - Throws: ``CodexCore/AgentRuntimeError`` `thread_not_found`.
    public func saveApproval(_ approval: StoredApproval) async throws {
        try state.withLock { state throws(AgentRuntimeError) in
            guard state.threads[approval.request.threadID] != nil else { throw AgentRuntimeError(code: .threadNotFound, message: "no such thread") }
            guard !state.approvals.contains(where: { $0.id == approval.id }) else { return }
            state.approvals.append(approval)
        }
    }

    /// One approval, or `nil`.
    public func approval(_ id: AgentApprovalID) async throws -> StoredApproval? {
        state.withLock { $0.approvals.first { $0.id == id } }
    }

    /// The approvals of `thread` (all when `nil`), oldest first.
    public func approvals(in thread: AgentThreadID?) async throws -> [StoredApproval] {
        state.withLock { state in
            state.approvals.filter { thread == nil || $0.request.threadID == thread }
                .sorted { ($0.requestedAt, $0.id.rawValue) < ($1.requestedAt, $1.id.rawValue) }
        }
    }

    /// Answers an approval once (see ``CodexCore/TurnJournaling``).
    public func answerApproval(_ id: AgentApprovalID, decision: AgentApprovalDecision, expectedDigest: String?, at date: Date) async throws -> StoredApproval {
        try state.withLock { state throws(AgentRuntimeError) in
            guard let index = state.approvals.firstIndex(where: { $0.id == id }) else {
                throw AgentRuntimeError(code: .approvalNotFound, message: "no such approval")
            }
            var approval = state.approvals[index]
            if let expectedDigest, expectedDigest != approval.digest {
                throw AgentRuntimeError(code: .storageConflict, message: "the approval was asked for another tool definition or other arguments")
            }
            if let answered = approval.decision {
                guard answered == decision else { throw AgentRuntimeError(code: .storageConflict, message: "the approval was already answered \(answered.rawValue)") }
                return approval
            }
            approval.decision = decision
            approval.answeredAt = date
            state.approvals[index] = approval
            return approval
        }
    }
}
