import Synchronization

/// The host's permission to keep working, the Linux counterpart of an operating system's background
/// task: a server's graceful-shutdown window, a command-line tool's SIGTERM. When the host calls
/// ``expire()``, every runtime created with this activity interrupts its active persistent turns and
/// suspends its running structured recovery sends, keeping their budgets and saved completions.
///
/// ```swift
/// let activity = AgentBackgroundActivity()
/// let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: store, backgroundActivity: activity))
/// // on SIGTERM, or when the shutdown grace period ends:
/// activity.expire()
/// ```
///
/// Work started after an expiry runs normally: the host decides whether to start any.
public final class AgentBackgroundActivity: Sendable {
    private struct State {
        var handlers: [UInt64: @Sendable () -> Void] = [:]
        var nextID: UInt64 = 0
        var expirations = 0
    }

    private let state = Mutex(State())

    /// Creates an activity.
    public init() {}

    /// How many times ``expire()`` was called.
    public var expirationCount: Int { state.withLock { $0.expirations } }

    /// Tells every runtime using this activity that the time to work is over.
    public func expire() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            state.expirations += 1
            return Array(state.handlers.values)
        }
        for handler in handlers { handler() }
    }

    /// Adds a handler run on each expiry; keep the ID to remove it.
    func onExpiry(_ handler: @escaping @Sendable () -> Void) -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            state.handlers[state.nextID] = handler
            return state.nextID
        }
    }

    /// Removes a handler.
    func removeHandler(_ id: UInt64) {
        _ = state.withLock { $0.handlers.removeValue(forKey: id) }
    }
}
