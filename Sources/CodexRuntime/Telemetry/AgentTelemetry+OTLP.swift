public import CodexCore
public import CodexTransport

extension AgentTelemetry {
    /// Telemetry exported over OTLP/HTTP where the standard OpenTelemetry variables say
    /// (``OTLPExporterConfiguration/fromEnvironment(_:)``), or `nil` when they name no endpoint.
    ///
    /// Content capture follows `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` unless `options`
    /// are given.
    ///
    /// ```swift
    /// let telemetry = try AgentTelemetry.fromEnvironment(ProcessInfo.processInfo.environment)
    /// ```
    ///
    /// - Throws: ``OTLPExporterError`` naming the variable at fault.
    public static func fromEnvironment(
        _ environment: [String: String], options: Options? = nil, httpClient: any HTTPClient = DefaultHTTPClient(),
        logSink: any AgentLogSink = NoOpAgentLogSink()
    ) throws(OTLPExporterError) -> AgentTelemetry? {
        guard let configuration = try OTLPExporterConfiguration.fromEnvironment(environment) else { return nil }
        let exporter = OTLPHTTPExporter(configuration: configuration, httpClient: httpClient, logSink: logSink)
        let chosen = options ?? Options(includeContent: OTLPExporterConfiguration.capturesContent(environment))
        return AgentTelemetry(exporter: exporter, options: chosen)
    }
}
