import CodexCore
import CodexTestSupport
import Foundation
import Testing

/// `send` and `demo` exporting to a real OTLP receiver (the Python `opentelemetry-proto` package parses
/// every request strictly).
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct TelemetryCommandTests {
    @Test func sendExportsWhenTheStandardVariablesAreSet() async throws {
        let directory = try temporaryDirectory("send-otel")
        defer { try? FileManager.default.removeItem(at: directory) }
        let receiver = try await OTLPTestReceiver.start()
        defer { receiver.stopNow() }
        let server = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply(["Hello"]))])
        defer { server.shutdown() }
        var environment = SendCommandTests.environment(directory)
        environment["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint.absoluteString
        environment["OTEL_EXPORTER_OTLP_HEADERS"] = "x-api-key=collector-secret"
        environment["OTEL_SERVICE_NAME"] = "orders-cli"
        let run = try await CommandRunner.codexctl(
            ["send", "Say hello", "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString], environment: environment
        )
        #expect(run.status == 0, "\(run.stderr)")
        let received = try await receiver.received()
        #expect(received.errors == [])
        #expect(received.spans.map(\.name).sorted() == ["chat gpt-5.6-sol", "codexkit.storage.commit", "invoke_agent"])
        #expect(received.spans.allSatisfy { $0.resource["service.name"] == "orders-cli" })
        #expect(received.headers.allSatisfy { $0["x-api-key"] == "collector-secret" })
        #expect(received.metrics.contains { $0.name == "codexkit.tokens" })
        // Content stays out by default.
        #expect(received.spans.allSatisfy { $0.attributes["gen_ai.input.messages"] == nil })
    }

    @Test func aBadVariableIsAWarningThatNeverShowsItsValueAndTheTurnRuns() async throws {
        let directory = try temporaryDirectory("send-otel-bad")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply(["Hello"]))])
        defer { server.shutdown() }
        var environment = SendCommandTests.environment(directory)
        environment["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:9"
        environment["OTEL_EXPORTER_OTLP_HEADERS"] = "collector-secret-without-equals"
        let run = try await CommandRunner.codexctl(
            ["send", "Say hello", "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString], environment: environment
        )
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Hello"))
        #expect(run.stderr.contains("warning: otlp_invalid_list: OTEL_EXPORTER_OTLP_HEADERS: entry 1 has no '='; telemetry is off"))
        #expect(!run.stderr.contains("collector-secret"))
    }

    @Test func theDemoSendsItsSpansToACollector() async throws {
        let receiver = try await OTLPTestReceiver.start()
        defer { receiver.stopNow() }
        let temporary = try temporaryDirectory("demo-otlp")
        defer { try? FileManager.default.removeItem(at: temporary) }
        let run = try await CommandRunner.codexctl(["demo", "--otlp", receiver.endpoint.absoluteString, "--json"], environment: ["TMPDIR": temporary.path])
        #expect(run.status == 0, "\(run.stderr)")
        let received = try await receiver.received()
        #expect(received.errors == [])
        var counts = Dictionary(received.spans.map { ($0.name, 1) }, uniquingKeysWith: +)
        // Storage writes vary with how the steps' writes coalesce; every other span is fixed by the script.
        #expect(counts.removeValue(forKey: "codexkit.storage.commit") ?? 0 > 0)
        #expect(counts == [
            "invoke_agent": 6, "chat gpt-6-astra": 12, "execute_tool lookup_order": 2, "execute_tool estimate_delivery": 1,
            "execute_tool parcels__track_parcel": 1, "tools/call track_parcel": 1, "codexkit.recovery": 2, "codexkit.recovery.attempt": 2,
        ])
        let byID = Dictionary(received.spans.map { ($0.spanID, $0) }, uniquingKeysWith: { first, _ in first })
        // The MCP step's call is a client span under the tool call that made it.
        let mcpCalls = received.spans.filter { $0.name.hasPrefix("tools/call ") }
        #expect(!mcpCalls.isEmpty)
        for call in mcpCalls {
            #expect(call.kind == 3)
            #expect(byID[call.parentSpanID]?.name.hasPrefix("execute_tool ") == true)
            #expect(call.attributes["network.transport"] == "pipe")
        }
        // Every span belongs to a turn's or a recovery's trace.
        for span in received.spans where !span.parentSpanID.isEmpty {
            #expect(byID[span.parentSpanID] != nil, "\(span.name) has no parent in the export")
        }
        let note = run.stdout.split(separator: "\n").first { $0.contains(#""type":"telemetry""#) }
        #expect(note?.contains(#""exported_spans":\#(received.spans.count)"#) == true)
    }
}
