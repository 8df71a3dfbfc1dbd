public import Foundation

/// Persistent runtime state: threads, history, turns and pending state; the SQLite and in-memory stores
/// implement it.
///
/// Implementation requirements: writes are atomic per call; history keeps insertion order; deleting a
/// thread removes everything it owns; reads never see a half-applied write.
///
/// Errors: a conforming store throws errors that say what happened through ``RuntimeStateStoreError``
/// (or ``AgentRuntimeError`` with the same codes):
/// - ``RuntimeStateStoreFailure/threadNotFound`` when a write names a thread that does not exist
///   (`appendHistory`, `upsertTurn`, `recordTurn`); nothing is written then;
/// - ``RuntimeStateStoreFailure/conflict`` when a write contradicts what is stored in another way;
/// - ``RuntimeStateStoreFailure/storageFailure`` for everything else (I/O, a full disk, corruption, a
///   refused write), with ``TransientStoreError`` saying whether retrying may help.
/// The runtime maps them with ``AgentRuntimeError/stateStore(_:)``, keeping the store's error as
/// `underlying`.
public protocol RuntimeStateStore: Sendable {
    /// All threads, most recently updated first.
    func threads() async throws -> [AgentThread]
    /// One thread, or `nil`.
    func thread(_ id: AgentThreadID) async throws -> AgentThread?
    /// Inserts or replaces a thread.
    func upsertThread(_ thread: AgentThread) async throws
    /// Deletes a thread with its history, turns and attachments, and (for a ``UsageRecording`` store)
    /// its usage records.
    func deleteThread(_ id: AgentThreadID) async throws
    /// Appends history items to a thread, in order; `thread_not_found` when the thread does not exist.
    func appendHistory(_ items: [AgentHistoryItem], to thread: AgentThreadID) async throws
    /// One page of a thread's history.
    func history(of thread: AgentThreadID, query: AgentHistoryQuery) async throws -> AgentHistoryPage
    /// Inserts or replaces a turn record; `thread_not_found` when its thread does not exist.
    func upsertTurn(_ turn: AgentTurn) async throws
    /// The most recent turn of a thread, or `nil`.
    func latestTurn(of thread: AgentThreadID) async throws -> AgentTurn?
    /// Records a turn's start or end as one atomic step: appends `history` to the turn's thread, inserts
    /// or replaces `turn`, and sets the thread's status and `updatedAt` with ``AgentThread/settle(_:at:)``
    /// (which clears a pending wait).
    /// - Throws: `thread_not_found` (the store's error type) when the thread does not exist; nothing is
    ///   written then.
    func recordTurn(_ turn: AgentTurn, appending history: [AgentHistoryItem], threadStatus: AgentThreadStatus, at date: Date) async throws
}

extension RuntimeStateStore {
    /// The whole history of a thread, read page by page and checked with ``AgentHistoryReplay`` so it can
    /// be sent as a Responses input.
    /// - Throws: ``AgentRuntimeError`` `history_replay_invalid` for a history cut mid tool call or with an
    ///   orphaned reasoning item (nothing is sent), or the store's error.
    public func replayableHistory(of thread: AgentThreadID) async throws -> [AgentHistoryItem] {
        var items: [AgentHistoryItem] = []
        var cursor: String?
        repeat {
            let page = try await history(of: thread, query: AgentHistoryQuery(limit: 4096, cursor: cursor))
            items += page.items
            cursor = page.nextCursor
        } while cursor != nil
        try AgentHistoryReplay.validate(items)
        return items
    }

    /// A default for stores without a transaction: the same three writes one after another (history,
    /// turn, thread status). Stores that can should make it atomic.
    public func recordTurn(_ turn: AgentTurn, appending history: [AgentHistoryItem], threadStatus: AgentThreadStatus, at date: Date) async throws {
        guard var thread = try await thread(turn.threadID) else {
            throw AgentRuntimeError(code: .threadNotFound, message: "no such thread")
        }
        try await appendHistory(history, to: turn.threadID)
        try await upsertTurn(turn)
        thread.settle(threadStatus, at: date)
        try await upsertThread(thread)
    }
}

/// A store error that may go away by itself (another process holds the database lock). The runtime's
/// ordered write queue retries such failures until storage is available instead of losing accepted
/// writes; other errors fail the write.
public protocol TransientStoreError: Error {
    /// Whether retrying later may succeed.
    var isTransient: Bool { get }
}
