import CodexCore
import CodexTransport
import Foundation
import Synchronization

/// Sends the exporter's requests one at a time, with the OTLP retry rules. One at a time also while a
/// request waits on the collector (the actor is reentrant, so a turn of its own guards the sends):
/// batches wait in the bounded queue, never in requests piling up on a slow collector.
actor OTLPSender {
    private var sending = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    /// Set by shutdown: each request gets one try, so the exit waits at most one timeout per request.
    private var stopping = false

    /// From now on, no request is retried.
    func stop() {
        stopping = true
    }

    let configuration: OTLPExporterConfiguration
    let httpClient: any HTTPClient
    let clock: any Clock<Duration>
    let logSink: any AgentLogSink
    /// Read by ``OTLPHTTPExporter/statistics`` from any thread.
    nonisolated let counts = Mutex(OTLPHTTPExporter.Statistics())

    /// The resource as exported (``OTLPExporterConfiguration/exportedResource``), made once.
    let resource: AgentTelemetryAttributes

    init(configuration: OTLPExporterConfiguration, httpClient: any HTTPClient, clock: any Clock<Duration>, logSink: any AgentLogSink) {
        self.configuration = configuration
        resource = configuration.exportedResource
        self.httpClient = httpClient
        self.clock = clock
        self.logSink = logSink
    }

    /// Sends batches from `take` until it returns an empty one.
    func sendSpans(taking take: @Sendable () -> [AgentSpanData]) async {
        guard let url = configuration.tracesURL else { return }
        await acquire()
        defer { release() }
        while true {
            let batch = take()
            if batch.isEmpty { return }
            let encoding = configuration.tracesEncoding
            let accepted = await post(encoding.traces(batch, resource: resource), encoding, to: url, headers: configuration.tracesHeaders, signal: "traces")
            counts.withLock { counts in
                if accepted { counts.exportedSpans += batch.count } else { counts.failedSpans += batch.count }
            }
        }
    }

    /// Sends one metrics snapshot (nothing when it has no series).
    func sendMetrics(_ snapshot: AgentMetrics.Snapshot) async {
        guard let url = configuration.metricsURL, !snapshot.series.isEmpty else { return }
        await acquire()
        defer { release() }
        let encoding = configuration.metricsEncoding
        let accepted = await post(encoding.metrics(snapshot, resource: resource), encoding, to: url, headers: configuration.metricsHeaders, signal: "metrics")
        counts.withLock { counts in
            if accepted { counts.metricExports += 1 } else { counts.failedMetricExports += 1 }
        }
    }

    private func acquire() async {
        guard sending else {
            sending = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Hands the turn to the next waiter, or frees it.
    private func release() {
        if waiting.isEmpty {
            sending = false
        } else {
            waiting.removeFirst().resume()
        }
    }

    /// The statuses the OTLP specification says to retry.
    static let retryableStatuses: Set<Int> = [429, 502, 503, 504]

    /// Posts `body`, retrying as the OTLP specification says; `true` when the collector accepted it.
    private func post(_ body: [UInt8], _ encoding: OTLPEncoding, to url: URL, headers signalHeaders: [String: String], signal: String) async -> Bool {
        var headers: HTTPHeaders = ["Content-Type": encoding.contentType]
        for (name, value) in configuration.headers { headers[name] = value }
        for (name, value) in signalHeaders { headers[name] = value }
        let request = HTTPRequest(
            method: "POST", url: url, headers: headers, body: body,
            timeouts: HTTPTimeouts(connect: configuration.timeout, firstByte: configuration.timeout, idle: configuration.timeout, total: configuration.timeout)
        )
        var backoff = configuration.initialBackoff
        for attempt in 1...max(1, configuration.maximumAttempts) {
            var retryAfter: TimeInterval?
            var reason: String
            do {
                let response = try await httpClient.send(request)
                // The reply (`{}` or a partial-success note) is read so the connection can be reused.
                _ = try? await response.body.prefix(upTo: 64 * 1024)
                if response.isSuccess { return true }
                reason = "http_\(response.statusCode)"
                guard Self.retryableStatuses.contains(response.statusCode) else {
                    log(.warning, "telemetry.export.refused", signal: signal, reason: reason, attempt: attempt)
                    return false
                }
                retryAfter = ResponsesErrorMapper.retryAfter(headers: response.headers, now: Date())
            } catch {
                if Task.isCancelled { return false }
                reason = (error as? AgentRuntimeError)?.code.rawValue ?? "transport_failure"
            }
            guard attempt < configuration.maximumAttempts, !stopping else {
                log(.warning, "telemetry.export.failed", signal: signal, reason: reason, attempt: attempt)
                return false
            }
            let delay = min(retryAfter.map { Duration.milliseconds(Int64(max(0, $0) * 1000)) } ?? backoff, configuration.maximumBackoff)
            backoff = min(backoff * 2, configuration.maximumBackoff)
            counts.withLock { $0.retries += 1 }
            log(.notice, "telemetry.export.retrying", signal: signal, reason: reason, attempt: attempt)
            if delay > .zero {
                do { try await clock.sleep(for: delay) } catch { return false }
            }
        }
        return false
    }

    private func log(_ level: AgentLogLevel, _ name: String, signal: String, reason: String, attempt: Int) {
        logSink.record(AgentLogEvent(
            level: level, category: .telemetry, name: name, message: "an OTLP \(signal) export did not go through",
            metadata: ["signal": signal, "reason": reason, "attempt": String(attempt)]
        ))
    }
}
