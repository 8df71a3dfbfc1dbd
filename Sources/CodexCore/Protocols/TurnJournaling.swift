public import Foundation

/// A state store that keeps durable turns' journals and their approvals: what lets a turn with tools
/// survive a crash (each step recorded before the action that depends on it) and an approval be answered
/// after a restart or from another process.
///
/// Implementation requirements:
/// - ``appendJournal(_:sequence:turn:thread:)`` is durable when it returns (a committed transaction) and
///   idempotent: appending the entry already stored under that sequence number again succeeds and writes
///   nothing; another entry under a taken number, or a gap, is `storage_conflict`; a thread that does
///   not exist is `thread_not_found`.
/// - ``journal(of:)`` returns a turn's entries in sequence order (empty for a turn without one).
/// - ``claimTurn(_:of:from:to:at:)`` is atomic: it reads and writes the owner in one transaction.
/// - ``answerApproval(_:decision:expectedDigest:at:)`` stores the first answer only: the same answer
///   again succeeds, another answer is `storage_conflict`, and an `expectedDigest` other than the stored
///   one is refused with `storage_conflict` (the tool or the arguments changed since it was asked).
/// - Deleting a thread deletes its turns' journals and approvals.
/// Errors follow ``RuntimeStateStore``'s rules. ``RuntimeStateStoreConformance``-style suites check all
/// of this for every store.
public protocol TurnJournaling: RuntimeStateStore {
    /// Appends `entry` as number `sequence` (0-based, consecutive) of `turn`'s journal.
    func appendJournal(_ entry: TurnJournalEntry, sequence: Int, turn: AgentTurnID, thread: AgentThreadID) async throws
    /// `turn`'s journal, in order.
    func journal(of turn: AgentTurnID) async throws -> [TurnJournalEntry]
    /// Stores an approval asked for (the same request again changes nothing).
    func saveApproval(_ approval: StoredApproval) async throws
    /// One approval, or `nil`.
    func approval(_ id: AgentApprovalID) async throws -> StoredApproval?
    /// The approvals of `thread` (every thread's when `nil`), pending and answered, oldest first.
    func approvals(in thread: AgentThreadID?) async throws -> [StoredApproval]
    /// Hands `turn` to `owner` when its recorded owner is still `expected`, in one step (compare and
    /// set): the turn is then `.running` under `owner`, and its thread `.running`. Two processes racing to
    /// resume one turn end with exactly one owner.
    /// - Returns: Whether the turn is now `owner`'s (`false`: another owner took it first, or it is no
    ///   longer running or waiting).
    func claimTurn(_ turn: AgentTurnID, of thread: AgentThreadID, from expected: String?, to owner: String, at date: Date) async throws -> Bool
    /// Answers an approval; returns it as stored.
    /// - Throws: ``AgentRuntimeError`` `approval_not_found` when there is no such approval; the store's
    ///   conflict (`storage_conflict` through the runtime) for another answer than the one stored, or an
    ///   `expectedDigest` that is not the stored one.
    func answerApproval(_ id: AgentApprovalID, decision: AgentApprovalDecision, expectedDigest: String?, at date: Date) async throws -> StoredApproval
}
