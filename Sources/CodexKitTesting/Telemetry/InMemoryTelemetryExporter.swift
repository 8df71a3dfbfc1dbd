public import CodexCore
import Synchronization

/// Keeps ended spans in memory, for tests of code that runs turns with telemetry on.
///
/// ```swift
/// let exporter = InMemoryTelemetryExporter()
/// let telemetry = AgentTelemetry(exporter: exporter)
/// // … run a turn with `telemetry` in the runtime's configuration …
/// exporter.spans(named: "invoke_agent").count
/// ```
public final class InMemoryTelemetryExporter: AgentTelemetryExporter {
    private let storage = Mutex<(spans: [AgentSpanData], metrics: AgentMetrics?, flushes: Int)>(([], nil, 0))

    /// Creates the exporter.
    public init() {}

    /// Keeps the span.
    public func export(_ span: AgentSpanData) {
        storage.withLock { $0.spans.append(span) }
    }

    /// Keeps the metrics to read in ``metricsSnapshot()``.
    public func attach(_ metrics: AgentMetrics) {
        storage.withLock { $0.metrics = metrics }
    }

    /// Counts the flush.
    public func flush() async {
        storage.withLock { $0.flushes += 1 }
    }

    /// Counts the flush.
    public func shutdown() async {
        await flush()
    }

    /// Every span ended so far, in the order they ended.
    public var spans: [AgentSpanData] { storage.withLock { $0.spans } }

    /// The spans with this name.
    public func spans(named name: String) -> [AgentSpanData] {
        storage.withLock { $0.spans.filter { $0.name == name } }
    }

    /// How many times ``flush()`` or ``shutdown()`` was called.
    public var flushCount: Int { storage.withLock { $0.flushes } }

    /// The attached metrics' current values, if any.
    public func metricsSnapshot() -> AgentMetrics.Snapshot? {
        storage.withLock { $0.metrics }?.snapshot()
    }

    /// Forgets every span.
    public func removeAll() {
        storage.withLock { $0.spans.removeAll() }
    }
}
