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

    /// The request's `Content-Type`.
    var contentType: String {
        switch self {
        case .protobuf: "application/x-protobuf"
        case .json: "application/json"
        }
    }
}
