public import CodexCore
public import Foundation
import Synchronization

/// A ``CodexCore/RuntimeStateStore`` in memory: for tests, previews and hosts that do not persist. It
/// behaves like the SQLite store (the same behaviour suite runs against both) and loses everything when
/// released.
///
/// ```swift
/// let store = InMemoryRuntimeStateStore()
/// try await store.upsertThread(AgentThread(title: "Scratch"))
/// ```
public final class InMemoryRuntimeStateStore: RuntimeStateStore {
    struct State {
        var threads: [AgentThreadID: AgentThread] = [:]
        var history: [AgentThreadID: [AgentHistoryItem]] = [:]
        var turns: [AgentThreadID: [AgentTurn]] = [:]
        /// Durable turns' journals, by turn (with the turn's thread, for deletion).
        var journals: [AgentTurnID: (thread: AgentThreadID, entries: [TurnJournalEntry])] = [:]
        /// Stored approvals, oldest first.
        var approvals: [StoredApproval] = []
        /// The usage ledger, by turn and request number.
        var usage: [UsageKey: AgentUsageRecord] = [:]

        /// Inserts or replaces `turn` in its thread's list.
        mutating func upsert(_ turn: AgentTurn) {
            var list = turns[turn.threadID] ?? []
            if let index = list.firstIndex(where: { $0.id == turn.id }) {
                list[index] = turn
            } else {
                list.append(turn)
            }
            turns[turn.threadID] = list
        }
    }

    let state = Mutex(State())
    private let owners = InProcessOwnerRegistry()

    /// Creates an empty store.
    public init() {}

    /// All threads, most recently updated first (ties by ID).
    public func threads() async throws -> [AgentThread] {
        state.withLock { state in
            state.threads.values.sorted { ($0.updatedAt, $1.id.rawValue) > ($1.updatedAt, $0.id.rawValue) }
        }
    }

    /// One thread, or `nil`.
    public func thread(_ id: AgentThreadID) async throws -> AgentThread? {
        state.withLock { $0.threads[id] }
    }

    /// Inserts or replaces a thread (its history and turns stay).
    public func upsertThread(_ thread: AgentThread) async throws {
        state.withLock { $0.threads[thread.id] = thread }
    }

    /// Deletes a thread with its history, turns, journals, approvals and usage records.
    public func deleteThread(_ id: AgentThreadID) async throws {
        state.withLock { state in
            state.threads[id] = nil
            state.history[id] = nil
            state.turns[id] = nil
            state.journals = state.journals.filter { $0.value.thread != id }
            state.approvals.removeAll { $0.request.threadID == id }
            state.usage = state.usage.filter { $0.value.threadID != id }
        }
    }

    /// Appends history items to a thread, in order, all or nothing.
    /// - Throws: ``CodexCore/AgentRuntimeError`` `thread_not_found`.
    public func appendHistory(_ items: [AgentHistoryItem], to thread: AgentThreadID) async throws {
        try state.withLock { state throws(AgentRuntimeError) in
            guard state.threads[thread] != nil else { throw AgentRuntimeError(code: .threadNotFound, message: "no such thread") }
            state.history[thread, default: []].append(contentsOf: items)
        }
    }

    /// One page of a thread's history; the cursor is the 1-based position of the last item returned.
    public func history(of thread: AgentThreadID, query: AgentHistoryQuery) async throws -> AgentHistoryPage {
        let items = state.withLock { $0.history[thread] ?? [] }
        let limit = max(1, query.limit)
        let cursor = query.cursor.flatMap(Int.init)
        switch query.direction {
        case .forward:
            let start = max(0, cursor ?? 0)
            guard start < items.count else { return AgentHistoryPage(items: [], nextCursor: nil) }
            let end = min(items.count, start + limit)
            return AgentHistoryPage(items: Array(items[start..<end]), nextCursor: end < items.count ? String(end) : nil)
        case .backward:
            let end = min(items.count, (cursor ?? items.count + 1) - 1)
            guard end > 0 else { return AgentHistoryPage(items: [], nextCursor: nil) }
            let start = max(0, end - limit)
            return AgentHistoryPage(items: items[start..<end].reversed(), nextCursor: start > 0 ? String(start + 1) : nil)
        }
    }

    /// Inserts or replaces a turn record.
    /// - Throws: ``CodexCore/AgentRuntimeError`` `thread_not_found`.
    public func upsertTurn(_ turn: AgentTurn) async throws {
        try state.withLock { state throws(AgentRuntimeError) in
            guard state.threads[turn.threadID] != nil else { throw AgentRuntimeError(code: .threadNotFound, message: "no such thread") }
            state.upsert(turn)
        }
    }

    /// Records a turn's start or end atomically (history, turn record, thread status).
    /// - Throws: ``CodexCore/AgentRuntimeError`` `thread_not_found`.
    public func recordTurn(_ turn: AgentTurn, appending history: [AgentHistoryItem], threadStatus: AgentThreadStatus, at date: Date) async throws {
        try state.withLock { state throws(AgentRuntimeError) in
            guard var thread = state.threads[turn.threadID] else { throw AgentRuntimeError(code: .threadNotFound, message: "no such thread") }
            state.history[turn.threadID, default: []].append(contentsOf: history)
            state.upsert(turn)
            thread.settle(threadStatus, at: date)
            state.threads[turn.threadID] = thread
        }
    }

    /// The most recent turn of a thread (by start time, then insertion), or `nil`.
    public func latestTurn(of thread: AgentThreadID) async throws -> AgentTurn? {
        state.withLock { state in
            let turns = state.turns[thread] ?? []
            return turns.indices.max { (turns[$0].startedAt, $0) < (turns[$1].startedAt, $1) }.map { turns[$0] }
        }
    }
}

extension InMemoryRuntimeStateStore: RuntimeOwnerLeasing {
    /// Takes an owner lease for a runtime sharing this store in this process (see
    /// ``CodexCore/RuntimeOwnerLeasing``); it ends when the lease is released.
    public func acquireOwnerLease() throws -> (any RuntimeOwnerLease)? {
        owners.acquire()
    }

    /// Whether a runtime on this store still holds the lease of `ownerID`.
    public func isOwnerLeaseHeld(_ ownerID: String) throws -> Bool {
        owners.isHeld(ownerID)
    }
}

/// The live owner IDs of one in-memory store.
final class InProcessOwnerRegistry: Sendable {
    private let live = Mutex<Set<String>>([])

    func acquire() -> any RuntimeOwnerLease {
        let lease = InProcessOwnerLease(ownerID: UUID().uuidString.lowercased(), registry: self)
        live.withLock { _ = $0.insert(lease.ownerID) }
        return lease
    }

    func isHeld(_ ownerID: String) -> Bool { live.withLock { $0.contains(ownerID) } }

    func release(_ ownerID: String) { live.withLock { _ = $0.remove(ownerID) } }
}

/// A lease of ``InProcessOwnerRegistry``, released on deinit.
final class InProcessOwnerLease: RuntimeOwnerLease {
    let ownerID: String
    private let registry: InProcessOwnerRegistry

    init(ownerID: String, registry: InProcessOwnerRegistry) {
        self.ownerID = ownerID
        self.registry = registry
    }

    deinit { registry.release(ownerID) }
}
