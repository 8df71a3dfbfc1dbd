import CodexCore
import Foundation

extension OTLPExporterConfiguration {
    /// The configuration the standard OpenTelemetry variables describe, or `nil` when they name no
    /// endpoint (or `OTEL_SDK_DISABLED` is `true`).
    ///
    /// Read: `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL; `/v1/traces` and `/v1/metrics` are appended),
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` and `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` (used as they are),
    /// `OTEL_EXPORTER_OTLP_HEADERS` and the per-signal `…_TRACES_HEADERS` / `…_METRICS_HEADERS`
    /// (`key=value` pairs, comma-separated, values percent-decoded), `OTEL_EXPORTER_OTLP_TIMEOUT`
    /// (milliseconds), `OTEL_EXPORTER_OTLP_PROTOCOL` and the per-signal `…_TRACES_PROTOCOL` /
    /// `…_METRICS_PROTOCOL` (`http/protobuf`, the default, or `http/json`; a signal's own variable wins,
    /// and the shared one is read only for a signal that is on and has none; `grpc` is refused),
    /// `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER`
    /// (`none` turns a signal off), `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_BSP_MAX_QUEUE_SIZE`,
    /// `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` and `OTEL_METRIC_EXPORT_INTERVAL` (milliseconds).
    ///
    /// - Throws: ``OTLPExporterError`` naming the variable at fault (never its value).
    public static func fromEnvironment(_ environment: [String: String]) throws(OTLPExporterError) -> OTLPExporterConfiguration? {
        func value(_ name: String) -> String? {
            guard let text = environment[name]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
            return text
        }
        if value("OTEL_SDK_DISABLED")?.lowercased() == "true" { return nil }
        let tracesOff = value("OTEL_TRACES_EXPORTER")?.lowercased() == "none"
        let metricsOff = value("OTEL_METRICS_EXPORTER")?.lowercased() == "none"
        let base = try value("OTEL_EXPORTER_OTLP_ENDPOINT").map { text throws(OTLPExporterError) in try endpoint(text, "OTEL_EXPORTER_OTLP_ENDPOINT") }
        let traces = try value("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").map { text throws(OTLPExporterError) in try endpoint(text, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") }
            ?? base.flatMap { signalURL($0, "v1/traces") }
        let metrics = try value("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT").map { text throws(OTLPExporterError) in try endpoint(text, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") }
            ?? base.flatMap { signalURL($0, "v1/metrics") }
        guard let anchor = base ?? traces ?? metrics else { return nil }
        func encoding(_ name: String) throws(OTLPExporterError) -> OTLPEncoding? {
            guard let proto = value(name)?.lowercased() else { return nil }
            switch proto {
            case "http/protobuf": return .protobuf
            case "http/json": return .json
            default:
                throw OTLPExporterError(code: .unsupportedProtocol, setting: name, message: "only OTLP over HTTP is supported (http/protobuf or http/json)")
            }
        }
        // A signal's own variable wins over the shared one, which is read only for a signal that is on
        // and has none: a shared `grpc` meant for other services does not stop two signals set to HTTP.
        func signalEncoding(_ name: String, off: Bool) throws(OTLPExporterError) -> OTLPEncoding? {
            guard !off else { return nil }
            if let own = try encoding(name) { return own }
            return try encoding("OTEL_EXPORTER_OTLP_PROTOCOL")
        }
        let tracesEncoding = try signalEncoding("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", off: tracesOff)
        let metricsEncoding = try signalEncoding("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", off: metricsOff)
        var configuration = OTLPExporterConfiguration(endpoint: anchor)
        configuration.tracesURL = tracesOff ? nil : traces
        configuration.metricsURL = metricsOff ? nil : metrics
        if let tracesEncoding { configuration.tracesEncoding = tracesEncoding }
        if let metricsEncoding { configuration.metricsEncoding = metricsEncoding }
        configuration.headers = try value("OTEL_EXPORTER_OTLP_HEADERS").map { text throws(OTLPExporterError) in try pairs(text, "OTEL_EXPORTER_OTLP_HEADERS") } ?? [:]
        // Per-signal headers go with their signal only (two signals may go to two vendors).
        configuration.tracesHeaders = try value("OTEL_EXPORTER_OTLP_TRACES_HEADERS").map { text throws(OTLPExporterError) in
            try pairs(text, "OTEL_EXPORTER_OTLP_TRACES_HEADERS")
        } ?? [:]
        configuration.metricsHeaders = try value("OTEL_EXPORTER_OTLP_METRICS_HEADERS").map { text throws(OTLPExporterError) in
            try pairs(text, "OTEL_EXPORTER_OTLP_METRICS_HEADERS")
        } ?? [:]
        var resource = AgentTelemetryAttributes()
        if let text = value("OTEL_RESOURCE_ATTRIBUTES") {
            for (key, attribute) in try pairs(text, "OTEL_RESOURCE_ATTRIBUTES").sorted(by: { $0.key < $1.key }) { resource[key] = .string(attribute) }
        }
        if let name = value("OTEL_SERVICE_NAME") { resource["service.name"] = .string(name) }
        if resource["service.name"] == nil { resource["service.name"] = "unknown_service:codexkit" }
        configuration.resource = resource
        if let timeout = try milliseconds("OTEL_EXPORTER_OTLP_TIMEOUT") { configuration.timeout = timeout }
        if let delay = try milliseconds("OTEL_BSP_SCHEDULE_DELAY") { configuration.scheduleDelay = delay }
        if let interval = try milliseconds("OTEL_METRIC_EXPORT_INTERVAL") { configuration.metricInterval = interval }
        if let size = try count("OTEL_BSP_MAX_QUEUE_SIZE") { configuration.maximumQueueSize = size }
        if let size = try count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE") { configuration.maximumBatchSize = size }
        return configuration

        func count(_ name: String) throws(OTLPExporterError) -> Int? {
            guard let text = value(name) else { return nil }
            guard let number = Int(text), number > 0 else {
                throw OTLPExporterError(code: .invalidNumber, setting: name, message: "not a positive whole number")
            }
            return number
        }
        func milliseconds(_ name: String) throws(OTLPExporterError) -> Duration? {
            try count(name).map { .milliseconds($0) }
        }
    }

    /// Whether the variables ask for content capture: `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`
    /// is `true`.
    public static func capturesContent(_ environment: [String: String]) -> Bool {
        environment["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"]?.trimmingCharacters(in: .whitespaces).lowercased() == "true"
    }

    private static func endpoint(_ text: String, _ setting: String) throws(OTLPExporterError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty
        else {
            throw OTLPExporterError(code: .invalidEndpoint, setting: setting, message: "not an absolute http or https URL with a host")
        }
        return url
    }

    /// `a=1,b=x%20y` as pairs; values and keys percent-decoded, surrounding spaces trimmed.
    static func pairs(_ text: String, _ setting: String) throws(OTLPExporterError) -> [String: String] {
        var result: [String: String] = [:]
        for (index, entry) in text.split(separator: ",", omittingEmptySubsequences: true).enumerated() {
            let trimmed = entry.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw OTLPExporterError(code: .invalidList, setting: setting, message: "entry \(index + 1) has no '='")
            }
            let rawKey = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
            let rawValue = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard let key = rawKey.removingPercentEncoding, !key.isEmpty, let decoded = rawValue.removingPercentEncoding,
                  !(key + decoded).unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else {
                throw OTLPExporterError(
                    code: .invalidList, setting: setting, message: "entry \(index + 1) has an empty key, bad percent-encoding or a control character"
                )
            }
            result[key] = decoded
        }
        return result
    }
}
