@testable import CodexRuntime
import CodexCore
import CodexKitTesting
import CodexLoopback
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation

/// A runtime over the loopback model server, exporting to the Python OTLP receiver (the official
/// `opentelemetry-proto` package parses every export strictly). The exporter's schedule runs on a
/// manual clock that never advances: spans leave only when a test flushes.
struct OTLPTestHarness {
    let receiver: OTLPTestReceiver
    let server: LoopbackHTTPServer
    let exporter: OTLPHTTPExporter
    let telemetry: AgentTelemetry
    let runtime: AgentRuntime
    let store: InMemoryRuntimeStateStore

    static func start(
        encoding: OTLPEncoding = .protobuf, replies: [ScriptedReply], tools: [AgentTool] = [], options: AgentTelemetry.Options = .init(),
        configure: (inout OTLPExporterConfiguration) -> Void = { _ in }, receiver existing: OTLPTestReceiver? = nil,
        endpoint: URL? = nil
    ) async throws -> OTLPTestHarness {
        let receiver: OTLPTestReceiver
        if let existing { receiver = existing } else { receiver = try await OTLPTestReceiver.start() }
        let server = try LoopbackHTTPServer(replies: replies)
        var configuration = OTLPExporterConfiguration(endpoint: endpoint ?? receiver.endpoint, serviceName: "otlp-tests", headers: ["x-collector-key": "k1"])
        configuration.tracesEncoding = encoding
        configuration.metricsEncoding = encoding
        configuration.maximumAttempts = 3
        // The schedule runs on a manual clock that never advances, so a back-off would never end: retries
        // go at once. And a request never times out while a test holds the collector, however slow the
        // machine (the timeout here is a hang guard, not a deadline a test could race).
        configuration.initialBackoff = .zero
        configuration.maximumBackoff = .zero
        configuration.timeout = .seconds(600)
        configure(&configuration)
        let exporter = OTLPHTTPExporter(configuration: configuration, clock: ManualClock())
        let telemetry = AgentTelemetry(exporter: exporter, options: options)
        let store = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(
            backend: try BackendHarness.backend(server), stateStore: store, tools: tools, telemetry: telemetry
        ))
        return OTLPTestHarness(receiver: receiver, server: server, exporter: exporter, telemetry: telemetry, runtime: runtime, store: store)
    }

    /// Runs one streamed turn to its end.
    func turn(_ text: String = "Hello") async throws -> (events: [AgentEvent], error: (any Error)?) {
        let thread = try await runtime.createThread(model: .gpt6Astra)
        return await collect(try await runtime.stream(Request(text: text), in: thread.id))
    }

    /// Flushes and reads what the receiver parsed.
    func exported() async throws -> OTLPReceived {
        await telemetry.flush()
        return try await receiver.received()
    }

    func stop() {
        server.shutdown()
        receiver.stopNow()
    }
}

extension Array where Element == OTLPReceivedSpan {
    /// The one span named `name`.
    func named(_ name: String) -> OTLPReceivedSpan? { first { $0.name == name } }

    /// Each span as `name <- parent name`, sorted: the tree's shape.
    var tree: [String] {
        let byID = Dictionary(map { ($0.spanID, $0.name) }, uniquingKeysWith: { first, _ in first })
        return map { "\($0.name) <- \($0.parentSpanID.isEmpty ? "-" : byID[$0.parentSpanID] ?? "?")" }.sorted()
    }
}

/// A tool that answers `result <call id>`.
func echoTool(_ name: String, parallel: Bool = true) -> AgentTool {
    AgentTool(definition: ToolDefinition(
        name: name, description: "The \(name) tool.", inputSchema: ["type": "object"], supportsParallelExecution: parallel
    )) { invocation in
        .success(invocation, text: "result \(invocation.id.rawValue)")
    }
}

/// A reply that asks for `calls` (call ID, tool name) in one pass.
func toolCallReply(_ id: String, calls: [(String, String)]) -> ScriptedReply {
    var script = ResponsesScript()
    script.created(id)
    for (index, call) in calls.enumerated() {
        script.functionCallDone("fc_\(call.0)", callID: call.0, name: call.1, arguments: #"{"q":"x"}"#, index: index)
    }
    script.completed(id)
    return .sse(script.events)
}
