import CodexCore
import Foundation

/// A change a runtime write made, published after the store accepted it.
enum RuntimeChange: Sendable {
    /// The thread was created or updated (title, configuration, status, pending wait).
    case thread(AgentThreadID)
    /// Items were appended to the thread's history.
    case history(AgentThreadID, [AgentHistoryItem])
    /// The thread was deleted with everything it owned.
    case deleted(AgentThreadID)

    /// The thread the change concerns.
    var threadID: AgentThreadID {
        switch self {
        case .thread(let id), .history(let id, _), .deleted(let id): return id
        }
    }
}

/// Fans each published change out to the current subscribers (observations). Handlers run inside the
/// write queue's step that made the change, with the store that step uses, so what they read is exactly
/// the state after that write; a handler returns `false` to unsubscribe.
final class RuntimeChangeFeed: Sendable {
    /// A subscriber: told each change with the store to read from; `false` ends the subscription.
    typealias Handler = @Sendable (RuntimeChange, any RuntimeStateStore) async -> Bool

    private let handlers = HandlerList<Handler>()

    /// Adds a subscriber; keep the ID to remove it.
    func subscribe(_ handler: @escaping Handler) -> UInt64 {
        handlers.add(handler)
    }

    /// Removes a subscriber.
    func unsubscribe(_ id: UInt64) {
        handlers.remove(id)
    }

    /// How many subscribers are registered (for tests: a finished observation leaves none behind).
    var subscriberCount: Int { handlers.count }

    /// Tells every subscriber about `change`, in subscription order.
    func publish(_ change: RuntimeChange, store: any RuntimeStateStore) async {
        for (id, handler) in handlers.snapshot where await !handler(change, store) {
            unsubscribe(id)
        }
    }
}

/// The write queue's store: every write the base store accepted is published to the change feed.
struct ObservedStateStore: RuntimeStateStore {
    let base: any RuntimeStateStore
    let feed: RuntimeChangeFeed

    func threads() async throws -> [AgentThread] { try await base.threads() }
    func thread(_ id: AgentThreadID) async throws -> AgentThread? { try await base.thread(id) }
    func history(of thread: AgentThreadID, query: AgentHistoryQuery) async throws -> AgentHistoryPage {
        try await base.history(of: thread, query: query)
    }
    func latestTurn(of thread: AgentThreadID) async throws -> AgentTurn? { try await base.latestTurn(of: thread) }
    func upsertTurn(_ turn: AgentTurn) async throws { try await base.upsertTurn(turn) }

    func upsertThread(_ thread: AgentThread) async throws {
        try await base.upsertThread(thread)
        await feed.publish(.thread(thread.id), store: base)
    }

    func deleteThread(_ id: AgentThreadID) async throws {
        try await base.deleteThread(id)
        await feed.publish(.deleted(id), store: base)
    }

    func appendHistory(_ items: [AgentHistoryItem], to thread: AgentThreadID) async throws {
        try await base.appendHistory(items, to: thread)
        if !items.isEmpty { await feed.publish(.history(thread, items), store: base) }
    }

    func recordTurn(_ turn: AgentTurn, appending history: [AgentHistoryItem], threadStatus: AgentThreadStatus, at date: Date) async throws {
        try await base.recordTurn(turn, appending: history, threadStatus: threadStatus, at: date)
        if !history.isEmpty { await feed.publish(.history(turn.threadID, history), store: base) }
        await feed.publish(.thread(turn.threadID), store: base)
    }
}
