import CodexCore
import CodexLoopback
import CodexRuntime
import CodexTransport
import Foundation
import Synchronization

extension RuntimeBenchmark {
    /// What telemetry costs a turn: the SDK's CPU per one-pass streamed turn with OpenTelemetry on (spans
    /// and metrics exported over OTLP/HTTP to a loopback collector that accepts everything, the export's
    /// own CPU included) next to the same turns with it off, in alternating rounds of the same run. The
    /// SDK's CPU is the round's process CPU less that of the same HTTP exchanges alone (the loopback model
    /// server runs in this process) and, for the export, less the collector's own CPU (read on its
    /// connection threads; the exporter keeps one connection, so one thread does nearly all of it). The ratio is the median of the rounds' own ratios (each round runs
    /// every variant back to back), which keeps drift in the machine's load out of it; a second runtime
    /// with telemetry off gives the noise floor. Each runtime has a backend and HTTP client of its own.
    func measureTelemetry(into report: inout BenchReport, rounds: Int = 40, turnsPerRound: Int = 100) async throws {
        let server = try LoopbackHTTPServer(keepsRequests: false) { _ in Self.turnReply }
        defer { server.shutdown() }
        // The collector stands for a service elsewhere: the CPU its threads spend reading exports is
        // measured (on each request) so that the SDK's figure can leave it out, as the bare exchanges
        // leave out the model server's.
        let collectorCPU = CollectorCPU()
        let collector = try LoopbackHTTPServer(keepsRequests: false) { _ in
            collectorCPU.note()
            return .json("{}")
        }
        defer { collector.shutdown() }
        // Each runtime has a backend and an HTTP client of its own (a shared backend or connection cache
        // favours one of them), and the bare exchanges another.
        var configuration = CodexResponsesBackendConfiguration()
        configuration.endpoint = try ResponsesEndpoint(baseURL: server.baseURL.appendingPathComponent("v1"), profile: .publicAPI)
        func backend() -> CodexResponsesBackend {
            CodexResponsesBackend(configuration: configuration, httpClient: CurlHTTPClient(), authProvider: APIKeyAuthProvider(apiKey: "sk-bench"))
        }
        let http = CurlHTTPClient()
        let exporter = OTLPHTTPExporter(
            configuration: OTLPExporterConfiguration(endpoint: collector.baseURL, serviceName: "bench"), httpClient: CurlHTTPClient()
        )
        let telemetry = AgentTelemetry(exporter: exporter)
        let off = try AgentRuntime(configuration: .init(backend: backend(), stateStore: InMemoryRuntimeStateStore()))
        let on = try AgentRuntime(configuration: .init(backend: backend(), stateStore: InMemoryRuntimeStateStore(), telemetry: telemetry))
        // A second runtime with telemetry off: its ratio to the first is the bench's noise floor.
        let control = try AgentRuntime(configuration: .init(backend: backend(), stateStore: InMemoryRuntimeStateStore()))
        let discarding = try AgentRuntime(configuration: .init(
            backend: backend(), stateStore: InMemoryRuntimeStateStore(), telemetry: AgentTelemetry(exporter: DiscardingExporter())
        ))
        let request = HTTPRequest(
            method: "POST", url: server.baseURL.appendingPathComponent("v1/responses"),
            headers: ["Content-Type": "application/json", "Accept": "text/event-stream"], body: Array(#"{"model":"bench","stream":true}"#.utf8)
        )
        func turns(_ runtime: AgentRuntime) async throws -> Double {
            let before = Self.processCPUSeconds()
            for _ in 0..<turnsPerRound {
                let thread = try await runtime.createThread()
                guard try await runtime.send(Request(text: "Say hello"), in: thread.id) == "Hello there." else {
                    throw AgentRuntimeError(code: .invalidRequest, message: "an unexpected reply")
                }
            }
            if runtime === on { await telemetry.flush() }
            return Self.processCPUSeconds() - before
        }
        func exchanges() async throws -> Double {
            let before = Self.processCPUSeconds()
            for _ in 0..<turnsPerRound { _ = try await http.send(request).body.collect(upTo: 64 * 1024) }
            return Self.processCPUSeconds() - before
        }
        _ = try await turns(off)  // warm-up
        _ = try await turns(on)
        _ = try await turns(discarding)
        _ = try await turns(control)
        var controlSDK: [Double] = []
        var offSDK: [Double] = []
        var onSDK: [Double] = []
        var discardingSDK: [Double] = []
        var onWithoutCollectorSDK: [Double] = []
        for round in 0..<rounds {
            // Rotating order, so drift in the machine's load falls on every side.
            let order = [off, on, discarding, control]
            var cpu: [ObjectIdentifier: Double] = [:]
            var collectorShare = 0.0
            for offset in 0..<order.count {
                let runtime = order[(round + offset) % order.count]
                let collectorBefore = collectorCPU.total
                cpu[ObjectIdentifier(runtime)] = try await turns(runtime)
                if runtime === on { collectorShare = collectorCPU.total - collectorBefore }
            }
            let bareCPU = try await exchanges()
            offSDK.append(((cpu[ObjectIdentifier(off)] ?? 0) - bareCPU) / Double(turnsPerRound))
            onSDK.append(((cpu[ObjectIdentifier(on)] ?? 0) - bareCPU) / Double(turnsPerRound))
            onWithoutCollectorSDK.append(((cpu[ObjectIdentifier(on)] ?? 0) - collectorShare - bareCPU) / Double(turnsPerRound))
            discardingSDK.append(((cpu[ObjectIdentifier(discarding)] ?? 0) - bareCPU) / Double(turnsPerRound))
            controlSDK.append(((cpu[ObjectIdentifier(control)] ?? 0) - bareCPU) / Double(turnsPerRound))
        }
        await telemetry.shutdown()
        let statistics = exporter.statistics
        guard statistics.failedSpans == 0, statistics.droppedSpans == 0 else {
            throw AgentRuntimeError(code: .invalidRequest, message: "the collector lost spans: \(statistics.failedSpans) failed, \(statistics.droppedSpans) dropped")
        }
        let onRatio = Self.median(zip(onSDK, offSDK).map { $0 / max($1, 1e-9) })
        let onWithoutCollectorRatio = Self.median(zip(onWithoutCollectorSDK, offSDK).map { $0 / max($1, 1e-9) })
        let discardingRatio = Self.median(zip(discardingSDK, offSDK).map { $0 / max($1, 1e-9) })
        let controlRatio = Self.median(zip(controlSDK, offSDK).map { $0 / max($1, 1e-9) })
        let offMedian = Self.median(offSDK) * 1e6
        report.results.append(BenchResult(
            name: "telemetry",
            mode: "SDK CPU per turn with OTLP export on (\(statistics.exportedSpans) spans sent), the loopback collector's own CPU left out, median of \(rounds) rounds' ratios",
            metric: "cpu", value: offMedian * onWithoutCollectorRatio, unit: "µs", baseline: ("the same turns with telemetry off", offMedian)
        ))
        report.results.append(BenchResult(
            name: "telemetry", mode: "process CPU per turn with OTLP export on, the loopback collector's reading included",
            metric: "cpu", value: offMedian * onRatio, unit: "µs", baseline: ("the same turns with telemetry off", offMedian)
        ))
        report.results.append(BenchResult(
            name: "telemetry", mode: "SDK CPU per turn with spans and metrics recorded and discarded (the instrumentation alone)",
            metric: "cpu", value: offMedian * discardingRatio, unit: "µs", baseline: ("the same turns with telemetry off", offMedian)
        ))
        report.results.append(BenchResult(
            name: "telemetry", mode: "SDK CPU per turn of a second runtime with telemetry off (the bench's noise floor)",
            metric: "cpu", value: offMedian * controlRatio, unit: "µs", baseline: ("the same turns with telemetry off", offMedian)
        ))
    }
}

/// Takes spans and drops them: what the instrumentation costs without an export.
private struct DiscardingExporter: AgentTelemetryExporter {
    func export(_ span: AgentSpanData) {}
    func flush() async {}
    func shutdown() async {}
}

/// The CPU time the loopback collector's threads have spent, read on the thread that serves each
/// request when the request reaches the handler (its head and body read by then). A thread's first
/// reading counts from its start; a thread ID seen again with a smaller figure is a new thread.
private final class CollectorCPU: Sendable {
    private let state = Mutex<(byThread: [UInt: Double], total: Double)>(([:], 0))

    /// Adds what the calling thread spent since its last reading.
    func note() {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        let seconds = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        let thread = UInt(pthread_self())
        state.withLock { state in
            let last = state.byThread[thread] ?? 0
            state.total += seconds >= last ? seconds - last : seconds
            state.byThread[thread] = seconds
        }
    }

    /// The collector's CPU seconds so far.
    var total: Double { state.withLock { $0.total } }
}
