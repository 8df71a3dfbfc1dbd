import Synchronization

/// Handlers registered under IDs, in registration order, behind one lock: what the change feed and the
/// background activity keep their listeners in.
final class HandlerList<Handler: Sendable>: Sendable {
    private struct State {
        var handlers: [UInt64: Handler] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Adds a handler; keep the ID to remove it.
    func add(_ handler: Handler) -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            state.handlers[state.nextID] = handler
            return state.nextID
        }
    }

    /// Removes a handler (nothing happens for an unknown ID).
    func remove(_ id: UInt64) {
        _ = state.withLock { $0.handlers.removeValue(forKey: id) }
    }

    /// How many handlers are registered.
    var count: Int { state.withLock { $0.handlers.count } }

    /// The handlers with their IDs, in registration order (call them outside the lock).
    var snapshot: [(id: UInt64, handler: Handler)] {
        state.withLock { $0.handlers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
    }
}
