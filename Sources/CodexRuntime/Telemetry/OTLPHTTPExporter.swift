public import CodexCore
public import CodexTransport
import Foundation
import Synchronization

/// Sends spans and metrics to an OpenTelemetry collector over OTLP/HTTP, in binary protobuf (or JSON:
/// ``OTLPExporterConfiguration/tracesEncoding``, ``OTLPExporterConfiguration/metricsEncoding``),
/// through the SDK's HTTP client.
///
/// Ending a span only appends it to a bounded queue (``OTLPExporterConfiguration/maximumQueueSize``);
/// when the queue is full the oldest span is dropped and counted (``Statistics/droppedSpans`` and the
/// `codexkit.telemetry.spans.dropped` metric), so a collector that is down or slow never slows or fails
/// a turn. Spans go out in batches every ``OTLPExporterConfiguration/scheduleDelay`` or as soon as a
/// batch is full; metrics every ``OTLPExporterConfiguration/metricInterval``. A request answered 429,
/// 502, 503 or 504, or lost on the way, is sent again after a back-off (`Retry-After` when the
/// collector gives one), as the OTLP specification says; other failures drop the batch and count it.
///
/// ```swift
/// let exporter = OTLPHTTPExporter(configuration: OTLPExporterConfiguration(endpoint: collector))
/// let telemetry = AgentTelemetry(exporter: exporter)
/// // … run turns with `telemetry` in the runtime's configuration …
/// await telemetry.shutdown() // sends what is left
/// ```
public final class OTLPHTTPExporter: AgentTelemetryExporter {
    /// What the exporter has done so far.
    public struct Statistics: Sendable, Hashable {
        /// Spans accepted by the collector.
        public var exportedSpans = 0
        /// Spans dropped because the queue was full or the exporter was shut down.
        public var droppedSpans = 0
        /// Spans given up on: refused by the collector, or still failing after every attempt.
        public var failedSpans = 0
        /// Metric exports accepted by the collector.
        public var metricExports = 0
        /// Metric exports given up on.
        public var failedMetricExports = 0
        /// Requests sent again after a retryable failure.
        public var retries = 0
        /// Spans waiting in the queue now.
        public var queuedSpans = 0
    }

    /// The configuration.
    public let configuration: OTLPExporterConfiguration
    private let queue: OTLPSpanQueue.Shared
    private let sender: OTLPSender
    private let metrics = Mutex<AgentMetrics?>(nil)
    private let timers = Mutex<(started: Bool, stopped: Bool, tasks: [Task<Void, Never>])>((false, false, []))
    /// Set once the schedule's tasks exist: ending a span then takes no lock for them.
    private let timersStarted = Atomic<Bool>(false)
    private let clock: any Clock<Duration>

    /// Creates an exporter.
    ///
    /// - Parameters:
    ///   - configuration: Endpoints, headers, resource, limits.
    ///   - httpClient: The HTTP client (``DefaultHTTPClient``: libcurl on Linux).
    ///   - clock: The clock of the send schedule and the back-offs.
    ///   - logSink: Receives `telemetry.export.*` events (never span content or header values).
    public init(
        configuration: OTLPExporterConfiguration, httpClient: any HTTPClient = DefaultHTTPClient(),
        clock: any Clock<Duration> = ContinuousClock(), logSink: any AgentLogSink = NoOpAgentLogSink()
    ) {
        self.configuration = configuration
        self.clock = clock
        queue = OTLPSpanQueue.Shared(OTLPSpanQueue(capacity: configuration.maximumQueueSize, batchSize: configuration.maximumBatchSize))
        sender = OTLPSender(configuration: configuration, httpClient: httpClient, clock: clock, logSink: logSink)
    }

    deinit {
        for task in timers.withLock({ $0.tasks }) { task.cancel() }
    }

    /// What the exporter has done so far.
    public var statistics: Statistics {
        var result = sender.counts.withLock { $0 }
        queue.withLock { queue in
            result.droppedSpans = queue.dropped
            result.queuedSpans = queue.count
        }
        return result
    }

    /// Queues an ended span; never waits.
    public func export(_ span: AgentSpanData) {
        guard configuration.tracesURL != nil else { return }
        let (action, droppedNow) = queue.withLock { queue -> (OTLPSpanQueue.Action, Int) in
            let before = queue.dropped
            let action = queue.enqueue(span)
            return (action, queue.dropped - before)
        }
        if droppedNow > 0 { metrics.withLock { $0 }?.add(.droppedSpans, droppedNow) }
        startTimers()
        if action == .startSend {
            Task { [sender, queue] in await sender.sendSpans(taking: queue.takeBatch) }
        }
    }

    /// Keeps the metrics to send on the metric schedule.
    public func attach(_ metrics: AgentMetrics) {
        self.metrics.withLock { $0 = metrics }
        startTimers()
    }

    /// Sends every queued span and the current metric values; returns when the collector answered (or
    /// the attempts ran out).
    public func flush() async {
        await sender.sendSpans(taking: queue.takeBatch)
        if let metrics = metrics.withLock({ $0 }) { await sender.sendMetrics(metrics.snapshot()) }
    }

    /// Flushes, then stops the schedule; later spans are dropped (and counted).
    ///
    /// Each request of the final flush is tried once (no back-off), so shutdown waits at most one
    /// ``OTLPExporterConfiguration/timeout`` per request.
    public func shutdown() async {
        let tasks = timers.withLock { timers -> [Task<Void, Never>] in
            timers.started = true
            timers.stopped = true
            defer { timers.tasks = [] }
            return timers.tasks
        }
        // Cancelling a timer stops its sleep; a send it started runs in a task of its own and is not cut short.
        for task in tasks { task.cancel() }
        queue.withLock { $0.stop() }
        await sender.stop()
        await flush()
    }

    private func startTimers() {
        guard !timersStarted.load(ordering: .acquiring) else { return }
        timersStarted.store(true, ordering: .releasing)
        let start = timers.withLock { timers -> Bool in
            guard !timers.started else { return false }
            timers.started = true
            return true
        }
        guard start else { return }
        let spanTask = Task { [weak self, clock, delay = configuration.scheduleDelay] in
            while !Task.isCancelled {
                do { try await clock.sleep(for: delay) } catch { return }
                guard let self else { return }
                // In a task of its own: shutdown cancels the timer, never a send in progress.
                await Task { [sender = self.sender, queue = self.queue] in await sender.sendSpans(taking: queue.takeBatch) }.value
            }
        }
        let metricTask = Task { [weak self, clock, interval = configuration.metricInterval] in
            while !Task.isCancelled {
                do { try await clock.sleep(for: interval) } catch { return }
                guard let self, let metrics = self.metrics.withLock({ $0 }) else { return }
                await Task { [sender = self.sender] in await sender.sendMetrics(metrics.snapshot()) }.value
            }
        }
        // A shutdown that came in meanwhile has already taken the task list: stop these at once.
        let stopped = timers.withLock { timers -> Bool in
            if !timers.stopped { timers.tasks += [spanTask, metricTask] }
            return timers.stopped
        }
        if stopped {
            spanTask.cancel()
            metricTask.cancel()
        }
    }
}
