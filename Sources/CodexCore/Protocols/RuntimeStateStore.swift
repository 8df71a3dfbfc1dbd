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
    /// Deletes a thread with its history, turns and attachments.
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

/// What a state store's failure means, whatever the store.
public enum RuntimeStateStoreFailure: String, Sendable, Hashable {
    /// The thread a write names does not exist; nothing was written (`thread_not_found`).
    case threadNotFound = "thread_not_found"
    /// The write contradicts stored data in another way (`storage_conflict`).
    case conflict = "storage_conflict"
    /// Any other failure of the store (`storage_failure`).
    case storageFailure = "storage_failure"
}

/// A store's own error type, telling the runtime what it means (see ``RuntimeStateStore``).
public protocol RuntimeStateStoreError: Error {
    /// What the failure means.
    var stateStoreFailure: RuntimeStateStoreFailure { get }
}

extension AgentRuntimeError {
    /// The runtime's error for a state store's failure: an ``AgentRuntimeError`` stays as it is; a
    /// ``RuntimeStateStoreError`` gets the code its meaning names; anything else is `storage_failure`.
    /// The store's error is kept as ``underlying`` (its message is the store's log-safe text).
    public static func stateStore(_ error: any Error) -> AgentRuntimeError {
        if let error = error as? AgentRuntimeError { return error }
        let failure = (error as? any RuntimeStateStoreError)?.stateStoreFailure ?? .storageFailure
        let message = switch failure {
        case .threadNotFound: "no such thread"
        case .conflict: "the write contradicts the stored state"
        case .storageFailure: "the state store failed"
        }
        return AgentRuntimeError(code: Code(rawValue: failure.rawValue), message: message, underlying: error)
    }
}
