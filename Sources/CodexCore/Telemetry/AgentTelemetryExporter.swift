/// Where ended spans and metric snapshots go: the OTLP/HTTP exporter in CodexRuntime, or a host's own.
///
/// Implementation requirements: ``export(_:)`` is called inline on the thread that ended the span, so
/// it must not block or wait; it may be called from many threads at once. A full queue drops, it never
/// waits.
public protocol AgentTelemetryExporter: Sendable {
    /// Takes an ended span.
    func export(_ span: AgentSpanData)
    /// Called once, when the telemetry that uses this exporter is made: the metrics to read on the
    /// exporter's own schedule.
    func attach(_ metrics: AgentMetrics)
    /// Sends everything queued and the metrics' current values; returns when that is done or failed.
    func flush() async
    /// Flushes, then stops: later spans are dropped.
    func shutdown() async
}

extension AgentTelemetryExporter {
    /// Does nothing.
    public func attach(_ metrics: AgentMetrics) {}
}
