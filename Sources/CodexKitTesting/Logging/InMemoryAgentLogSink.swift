public import CodexCore
import Synchronization

/// Keeps events in memory, for tests and diagnostics screens.
///
/// ```swift
/// let sink = InMemoryAgentLogSink()
/// // … run something with `sink` …
/// sink.events(named: "recovery.receipt.saved").count
/// ```
public final class InMemoryAgentLogSink: AgentLogSink {
    private let storage = Mutex<[AgentLogEvent]>([])
    /// The most events kept; older ones are dropped first.
    public let capacity: Int

    /// Creates the sink.
    ///
    /// - Parameter capacity: The most events kept (at least 1). Default 10,000.
    public init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
    }

    /// Stores the event.
    public func record(_ event: AgentLogEvent) {
        storage.withLock { events in
            if events.count >= capacity { events.removeFirst(events.count - capacity + 1) }
            events.append(event)
        }
    }

    /// Every event kept, oldest first.
    public var events: [AgentLogEvent] { storage.withLock { $0 } }

    /// The events with this name.
    public func events(named name: String) -> [AgentLogEvent] {
        storage.withLock { $0.filter { $0.name == name } }
    }

    /// Forgets every event.
    public func removeAll() {
        storage.withLock { $0.removeAll() }
    }
}
