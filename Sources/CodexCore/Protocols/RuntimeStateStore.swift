public import Foundation

/// Direction of a history page.
public enum AgentHistoryDirection: String, Sendable, Hashable, Codable {
    /// Oldest first.
    case forward
    /// Newest first.
    case backward
}

/// A query for one page of a thread's history.
public struct AgentHistoryQuery: Sendable, Hashable, Codable {
    /// The default page size.
    public static let defaultLimit = 256

    /// The most items to return.
    public var limit: Int
    /// Which way to page.
    public var direction: AgentHistoryDirection
    /// Where to continue from (a cursor from a previous page), or `nil` for the start.
    public var cursor: String?

    /// Creates a query.
    public init(limit: Int = Self.defaultLimit, direction: AgentHistoryDirection = .forward, cursor: String? = nil) {
        self.limit = limit
        self.direction = direction
        self.cursor = cursor
    }
}

/// One page of history.
public struct AgentHistoryPage: Sendable, Hashable, Codable {
    /// The items, in the query's direction.
    public var items: [AgentHistoryItem]
    /// The cursor for the next page, or `nil` at the end.
    public var nextCursor: String?

    /// Creates a page.
    public init(items: [AgentHistoryItem], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

/// Persistent runtime state: threads, history, turns and pending state. A sketch that the storage issue
/// refines; the SQLite and in-memory stores implement it.
///
/// Implementation requirements: writes are atomic per call; history keeps insertion order; deleting a
/// thread removes everything it owns; reads never see a half-applied write.
public protocol RuntimeStateStore: Sendable {
    /// All threads, most recently updated first.
    func threads() async throws -> [AgentThread]
    /// One thread, or `nil`.
    func thread(_ id: AgentThreadID) async throws -> AgentThread?
    /// Inserts or replaces a thread.
    func upsertThread(_ thread: AgentThread) async throws
    /// Deletes a thread with its history, turns and attachments.
    func deleteThread(_ id: AgentThreadID) async throws
    /// Appends history items to a thread, in order.
    func appendHistory(_ items: [AgentHistoryItem], to thread: AgentThreadID) async throws
    /// One page of a thread's history.
    func history(of thread: AgentThreadID, query: AgentHistoryQuery) async throws -> AgentHistoryPage
    /// Inserts or replaces a turn record.
    func upsertTurn(_ turn: AgentTurn) async throws
    /// The most recent turn of a thread, or `nil`.
    func latestTurn(of thread: AgentThreadID) async throws -> AgentTurn?
    /// Records a turn's start or end as one atomic step: appends `history` to the turn's thread, inserts
    /// or replaces `turn`, and sets the thread's status and `updatedAt`.
    /// - Throws: `thread_not_found` (the store's error type) when the thread does not exist; nothing is
    ///   written then.
    func recordTurn(_ turn: AgentTurn, appending history: [AgentHistoryItem], threadStatus: AgentThreadStatus, at date: Date) async throws
}

extension RuntimeStateStore {
    /// A default for stores without a transaction: the same three writes one after another (history,
    /// turn, thread status). Stores that can should make it atomic.
    public func recordTurn(_ turn: AgentTurn, appending history: [AgentHistoryItem], threadStatus: AgentThreadStatus, at date: Date) async throws {
        guard var thread = try await thread(turn.threadID) else {
            throw AgentRuntimeError(code: .threadNotFound, message: "no such thread")
        }
        try await appendHistory(history, to: turn.threadID)
        try await upsertTurn(turn)
        thread.status = threadStatus
        thread.updatedAt = date
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
