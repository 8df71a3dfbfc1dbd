import CodexCore

/// How an OTLP/HTTP export request's body is encoded.
///
/// Every OTLP/HTTP receiver accepts binary protobuf; JSON is optional in the OTLP specification and
/// some receivers refuse it (with `415 Unsupported Media Type`).
public enum OTLPEncoding: String, Sendable, Hashable, CaseIterable {
    /// Binary protobuf, sent as `application/x-protobuf`: OTLP/HTTP's default and the smaller body
    /// (`OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf`).
    case protobuf
    /// Protobuf's JSON mapping with OTLP's rules (hex trace and span IDs, enums as numbers, 64-bit
    /// integers as strings), sent as `application/json`: readable on the wire
    /// (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`).
    case json

    /// One trace export request for `spans` in this encoding.
    func traces(_ spans: [AgentSpanData], resource: AgentTelemetryAttributes) -> [UInt8] {
        switch self {
        case .protobuf: OTLPProtobufEncoder.traces(spans, resource: resource)
        case .json: OTLPJSONEncoder.traces(spans, resource: resource)
        }
    }

    /// One metrics export request for `snapshot` in this encoding.
    func metrics(_ snapshot: AgentMetrics.Snapshot, resource: AgentTelemetryAttributes) -> [UInt8] {
        switch self {
        case .protobuf: OTLPProtobufEncoder.metrics(snapshot, resource: resource)
        case .json: OTLPJSONEncoder.metrics(snapshot, resource: resource)
        }
    }

    /// The request's `Content-Type`.
    var contentType: String {
        switch self {
        case .protobuf: "application/x-protobuf"
        case .json: "application/json"
        }
    }
}
