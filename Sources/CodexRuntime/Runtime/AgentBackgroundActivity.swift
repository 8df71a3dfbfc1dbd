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
    private let handlers = HandlerList<@Sendable () -> Void>()
    private let expirations = Mutex(0)

    /// Creates an activity.
    public init() {}

    /// How many times ``expire()`` was called.
    public var expirationCount: Int { expirations.withLock { $0 } }

    /// Tells every runtime using this activity that the time to work is over.
    public func expire() {
        expirations.withLock { $0 += 1 }
        for (_, handler) in handlers.snapshot { handler() }
    }

    /// Adds a handler run on each expiry; keep the ID to remove it.
    func onExpiry(_ handler: @escaping @Sendable () -> Void) -> UInt64 {
        handlers.add(handler)
    }

    /// Removes a handler.
    func removeHandler(_ id: UInt64) {
        handlers.remove(id)
    }
}
