public import CodexCore

/// Why an OTLP exporter could not be configured. The description names the setting, never its value
/// (headers carry credentials).
public struct OTLPExporterError: Error, Sendable, CustomStringConvertible {
    /// A stable snake_case error code.
    public struct Code: OpenVocabulary, ExpressibleByStringLiteral {
        /// The code text.
        public let rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Creates a code from a literal.
        public init(stringLiteral value: String) { rawValue = value }

        /// An endpoint is not an absolute `http` or `https` URL with a host.
        public static let invalidEndpoint: Code = "otlp_invalid_endpoint"
        /// The protocol is one this exporter does not speak (`grpc`).
        public static let unsupportedProtocol: Code = "otlp_unsupported_protocol"
        /// A `key=value` list (headers, resource attributes) has an entry without `=` or an empty key.
        public static let invalidList: Code = "otlp_invalid_list"
        /// A number setting (timeout, queue size, delay) is not a positive whole number.
        public static let invalidNumber: Code = "otlp_invalid_number"
    }

    /// The stable code.
    public var code: Code
    /// The setting at fault, e.g. `OTEL_EXPORTER_OTLP_HEADERS`.
    public var setting: String
    /// A short, log-safe explanation.
    public var message: String

    /// Creates an error.
    public init(code: Code, setting: String, message: String) {
        self.code = code
        self.setting = setting
        self.message = message
    }

    /// `<code>: <setting>: <message>`.
    public var description: String { "\(code.rawValue): \(setting): \(message)" }
}
