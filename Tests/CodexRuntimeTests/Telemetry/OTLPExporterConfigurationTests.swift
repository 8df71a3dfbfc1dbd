@testable import CodexRuntime
import CodexCore
import Foundation
import Testing

@Suite struct OTLPExporterConfigurationTests {
    @Test func theStandardVariablesConfigureTheExporter() throws {
        let configuration = try #require(try OTLPExporterConfiguration.fromEnvironment([
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/",
            "OTEL_EXPORTER_OTLP_HEADERS": "api-key=secret%20value, x-tenant = acme",
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-tenant=traces",
            "OTEL_SERVICE_NAME": "orders",
            "OTEL_RESOURCE_ATTRIBUTES": "service.name=ignored,deployment.environment=prod,team=a%2Cb",
            "OTEL_EXPORTER_OTLP_TIMEOUT": "2500",
            "OTEL_BSP_SCHEDULE_DELAY": "200",
            "OTEL_BSP_MAX_QUEUE_SIZE": "64",
            "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "16",
            "OTEL_METRIC_EXPORT_INTERVAL": "1000",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
        ]))
        #expect(configuration.tracesURL?.absoluteString == "http://collector:4318/v1/traces")
        #expect(configuration.metricsURL?.absoluteString == "http://collector:4318/v1/metrics")
        #expect(configuration.headers == ["api-key": "secret value", "x-tenant": "acme"])
        #expect(configuration.tracesHeaders == ["x-tenant": "traces"])
        #expect(configuration.metricsHeaders == [:])
        #expect(configuration.resource["service.name"] == "orders")
        #expect(configuration.resource["deployment.environment"] == "prod")
        #expect(configuration.resource["team"] == "a,b")
        #expect(configuration.timeout == .milliseconds(2_500))
        #expect(configuration.scheduleDelay == .milliseconds(200))
        #expect(configuration.maximumQueueSize == 64)
        #expect(configuration.maximumBatchSize == 16)
        #expect(configuration.metricInterval == .seconds(1))
        #expect(configuration.tracesEncoding == .json)
        #expect(configuration.metricsEncoding == .json)
    }

    @Test func protobufIsTheDefaultEncodingAndEachSignalMayChooseItsOwn() throws {
        let plain = try #require(try OTLPExporterConfiguration.fromEnvironment(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"]))
        #expect(plain.tracesEncoding == .protobuf)
        #expect(plain.metricsEncoding == .protobuf)
        #expect(OTLPExporterConfiguration(endpoint: try #require(URL(string: "http://c:4318"))).tracesEncoding == .protobuf)
        let mixed = try #require(try OTLPExporterConfiguration.fromEnvironment([
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "HTTP/PROTOBUF",
        ]))
        #expect(mixed.tracesEncoding == .json)
        #expect(mixed.metricsEncoding == .protobuf)
        let traces = try #require(try OTLPExporterConfiguration.fromEnvironment([
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json",
        ]))
        #expect(traces.tracesEncoding == .json)
        #expect(traces.metricsEncoding == .protobuf)
        // A signal's own variable wins: a shared `grpc` (set for other services) is not read for a
        // signal that has its own, nor for a signal that is off.
        let own = try #require(try OTLPExporterConfiguration.fromEnvironment([
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/protobuf",
        ]))
        #expect(own.tracesEncoding == .json)
        #expect(own.metricsEncoding == .protobuf)
        let oneOff = try #require(try OTLPExporterConfiguration.fromEnvironment([
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_METRICS_EXPORTER": "none",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
        ]))
        #expect(oneOff.tracesEncoding == .protobuf)
        #expect(oneOff.metricsURL == nil)
    }

    @Test func perSignalEndpointsAreUsedAsTheyAreAndNoneTurnsASignalOff() throws {
        let configuration = try #require(try OTLPExporterConfiguration.fromEnvironment([
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://traces.example/custom",
            "OTEL_METRICS_EXPORTER": "none",
        ]))
        #expect(configuration.tracesURL?.absoluteString == "https://traces.example/custom")
        #expect(configuration.metricsURL == nil)
        #expect(configuration.resource["service.name"] == "unknown_service:codexkit")
    }

    @Test func noEndpointOrADisabledSDKMeansNoExporter() throws {
        #expect(try OTLPExporterConfiguration.fromEnvironment([:]) == nil)
        #expect(try OTLPExporterConfiguration.fromEnvironment(["OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"]) == nil)
        #expect(try AgentTelemetry.fromEnvironment(["OTEL_SERVICE_NAME": "x"]) == nil)
        #expect(OTLPExporterConfiguration.capturesContent(["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "TRUE"]))
        #expect(!OTLPExporterConfiguration.capturesContent([:]))
    }

    @Test(arguments: [
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"], "otlp_invalid_endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT"),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://c"], "otlp_invalid_endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT"),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"], "otlp_unsupported_protocol", "OTEL_EXPORTER_OTLP_PROTOCOL"),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/s3cret"], "otlp_unsupported_protocol", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_HEADERS": "token-without-equals-sign-s3cret"], "otlp_invalid_list", "OTEL_EXPORTER_OTLP_HEADERS"),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_HEADERS": "a=b%0D%0AInjected: s3cret"], "otlp_invalid_list", "OTEL_EXPORTER_OTLP_HEADERS"),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_BSP_MAX_QUEUE_SIZE": "0"], "otlp_invalid_number", "OTEL_BSP_MAX_QUEUE_SIZE"),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TIMEOUT": "10s"], "otlp_invalid_number", "OTEL_EXPORTER_OTLP_TIMEOUT"),
    ])
    func badSettingsAreTypedErrorsThatNameTheVariableOnly(_ environment: [String: String], _ code: String, _ setting: String) {
        do {
            _ = try OTLPExporterConfiguration.fromEnvironment(environment)
            Issue.record("no error")
        } catch {
            #expect(error.code.rawValue == code)
            #expect(error.setting == setting)
            #expect(!error.description.contains("s3cret"))
        }
    }
}

@Suite struct OTLPSpanQueueTests {
    private func span(_ name: String) -> AgentSpanData {
        AgentSpanData(name: name, kind: .internal, context: .newTrace(), parentSpanID: nil, startTimeUnixNano: 1, endTimeUnixNano: 2, attributes: [:])
    }

    @Test func aFullQueueDropsTheOldestAndCountsIt() {
        var queue = OTLPSpanQueue(capacity: 3, batchSize: 2)
        #expect(queue.enqueue(span("a")) == .none)
        #expect(queue.enqueue(span("b")) == .startSend)
        #expect(queue.enqueue(span("c")) == .none)
        #expect(queue.enqueue(span("d")) == .none)
        #expect(queue.dropped == 1)
        #expect(queue.count == 3)
        #expect(queue.takeBatch().map(\.name) == ["b", "c"])
        #expect(queue.takeBatch().map(\.name) == ["d"])
        #expect(queue.takeBatch().map(\.name) == [])
        // The pending send ended with the empty batch: the next full batch starts one again.
        #expect(queue.enqueue(span("e")) == .none)
        #expect(queue.enqueue(span("f")) == .startSend)
    }

    @Test func aStoppedQueueDropsEverySpan() {
        var queue = OTLPSpanQueue(capacity: 3, batchSize: 2)
        queue.stop()
        #expect(queue.enqueue(span("a")) == .none)
        #expect(queue.dropped == 1)
        #expect(queue.count == 0)
    }
}
