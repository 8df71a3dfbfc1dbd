public import CodexCore
public import Foundation

/// Where and how an ``OTLPHTTPExporter`` sends: the OTLP/HTTP endpoints and each signal's encoding,
/// headers, the resource that names this service, and the batching, queue and retry limits.
public struct OTLPExporterConfiguration: Sendable {
    /// Where traces go (`…/v1/traces`), or `nil` to send none.
    public var tracesURL: URL?
    /// Where metrics go (`…/v1/metrics`), or `nil` to send none.
    public var metricsURL: URL?
    /// Extra request headers of both signals (for example a collector's API key).
    public var headers: [String: String]
    /// Headers only trace exports carry (added to ``headers``, replacing one of the same name).
    public var tracesHeaders: [String: String] = [:]
    /// Headers only metric exports carry (added to ``headers``, replacing one of the same name).
    public var metricsHeaders: [String: String] = [:]
    /// The resource attributes; `service.name` names the host. The SDK adds `telemetry.sdk.*`.
    public var resource: AgentTelemetryAttributes
    /// How trace export bodies are encoded (default ``OTLPEncoding/protobuf``, OTLP/HTTP's default).
    public var tracesEncoding: OTLPEncoding = .protobuf
    /// How metric export bodies are encoded (default ``OTLPEncoding/protobuf``).
    public var metricsEncoding: OTLPEncoding = .protobuf
    /// The longest one export request may take (default 10 s).
    public var timeout: Duration
    /// The most ended spans waiting to be sent (default 2,048); when full, the oldest is dropped and
    /// counted.
    public var maximumQueueSize: Int
    /// The most spans in one request (default 512); a full batch is sent at once.
    public var maximumBatchSize: Int
    /// How often queued spans are sent (default 5 s).
    public var scheduleDelay: Duration
    /// How often metrics are sent (default 60 s).
    public var metricInterval: Duration
    /// The most tries of one request after 429, 502, 503, 504 or a lost connection (default 5).
    public var maximumAttempts: Int
    /// The first back-off (default 1 s); each next one doubles, up to ``maximumBackoff``. A
    /// `Retry-After` header replaces it (up to ``maximumBackoff``).
    public var initialBackoff: Duration
    /// The longest back-off (default 30 s).
    public var maximumBackoff: Duration

    /// A configuration sending both signals to the collector at `endpoint` (for example
    /// `http://localhost:4318`): traces to `endpoint/v1/traces`, metrics to `endpoint/v1/metrics`.
    public init(endpoint: URL, serviceName: String = "codexkit", headers: [String: String] = [:]) {
        tracesURL = Self.signalURL(endpoint, "v1/traces")
        metricsURL = Self.signalURL(endpoint, "v1/metrics")
        self.headers = headers
        resource = ["service.name": .string(serviceName)]
        timeout = .seconds(10)
        maximumQueueSize = 2_048
        maximumBatchSize = 512
        scheduleDelay = .seconds(5)
        metricInterval = .seconds(60)
        maximumAttempts = 5
        initialBackoff = .seconds(1)
        maximumBackoff = .seconds(30)
    }

    /// ``resource`` as it is exported: with `telemetry.sdk.name`, `.language` and `.version` added
    /// where the host did not set them.
    var exportedResource: AgentTelemetryAttributes {
        var all = resource
        if all["telemetry.sdk.name"] == nil { all["telemetry.sdk.name"] = "codexkit" }
        if all["telemetry.sdk.language"] == nil { all["telemetry.sdk.language"] = "swift" }
        if all["telemetry.sdk.version"] == nil { all["telemetry.sdk.version"] = .string(CodexKitVersion.current) }
        return all
    }

    /// `base` with `path` appended after exactly one slash.
    static func signalURL(_ base: URL, _ path: String) -> URL? {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return URL(string: text + "/" + path)
    }
}
