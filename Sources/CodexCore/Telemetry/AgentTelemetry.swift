public import Foundation

/// OpenTelemetry-shaped telemetry for the SDK: spans for turns, model requests, tool and MCP calls,
/// recovery attempts and storage commits, and metrics for tokens, durations, retries, rate limits and
/// turns, handed to an ``AgentTelemetryExporter``.
///
/// One instance per host process is the usual shape; give it to the runtime's configuration. Nothing
/// here blocks a turn: ending a span hands it to the exporter's bounded queue, and a metric update is
/// a locked addition.
///
/// Content — prompts, model output, tool arguments and results — is recorded only when
/// ``Options/includeContent`` is on, and secrets are redacted from it even then.
public final class AgentTelemetry: Sendable {
    /// What the telemetry records beyond the defaults.
    public struct Options: Sendable {
        /// Record prompts, model output, tool arguments and tool results as span attributes
        /// (`gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.tool.call.arguments`,
        /// `gen_ai.tool.call.result`). Off by default. Secrets are redacted even when on.
        public var includeContent: Bool
        /// Send a W3C `traceparent` header on model requests, so the provider's side can join the
        /// trace. Off by default: the header tells the service the host's trace IDs.
        public var propagateTraceContext: Bool
        /// The most characters of one content attribute; longer content is cut (default 8,192).
        public var maximumContentCharacters: Int
        /// Secrets the host knows of (its API keys, tokens) to redact from content, in every form
        /// ``SecretRedactor`` finds; well-known key and token shapes are redacted without it.
        public var secrets: SecretRedactor

        /// Creates options.
        public init(
            includeContent: Bool = false, propagateTraceContext: Bool = false, maximumContentCharacters: Int = 8_192,
            secrets: SecretRedactor = SecretRedactor(secrets: [])
        ) {
            self.includeContent = includeContent
            self.propagateTraceContext = propagateTraceContext
            self.maximumContentCharacters = max(0, maximumContentCharacters)
            self.secrets = secrets
        }
    }

    /// The task-local parent a host set with ``withParent(_:operation:)``.
    @TaskLocal static var hostParent: AgentSpanContext?

    /// The options.
    public let options: Options
    /// The metrics this telemetry updates.
    public let metrics: AgentMetrics
    /// The exporter.
    public let exporter: any AgentTelemetryExporter
    /// The time source of span timestamps.
    public let wallClock: any AgentWallClock

    /// Creates telemetry that hands spans and metrics to `exporter`.
    ///
    /// - Parameters:
    ///   - exporter: Where spans and metrics go.
    ///   - options: Content capture and trace propagation (both off by default).
    ///   - wallClock: The time source of span timestamps.
    public init(exporter: any AgentTelemetryExporter, options: Options = Options(), wallClock: any AgentWallClock = SystemWallClock()) {
        self.exporter = exporter
        self.options = options
        self.wallClock = wallClock
        metrics = AgentMetrics(wallClock: wallClock)
        exporter.attach(metrics)
    }

    /// Runs `operation` so that the turns it starts join the host's trace: their root spans become
    /// children of `parent` (read from the host's incoming `traceparent` with
    /// ``AgentSpanContext/init(traceparent:)``). A parent that is not sampled turns recording off for
    /// those turns.
    public static func withParent<Result>(
        _ parent: AgentSpanContext?, isolation: isolated (any Actor)? = #isolation, operation: () async throws -> Result
    ) async rethrows -> Result {
        try await $hostParent.withValue(parent, operation: operation)
    }

    /// A new root span: a child of the host's parent (``withParent(_:operation:)``) when there is one,
    /// else the first span of a new trace.
    public func startRootSpan(_ name: String, kind: AgentSpanKind = .internal, attributes: AgentTelemetryAttributes = [:]) -> AgentSpan {
        if let parent = Self.hostParent {
            return AgentSpan(name: name, kind: kind, context: parent.child(), parentID: parent.spanValue, telemetry: self, attributes: attributes)
        }
        return AgentSpan(name: name, kind: kind, context: .newTrace(), parentID: nil, telemetry: self, attributes: attributes)
    }

    /// A span under the current span (``AgentSpan/current``) when there is one, else a root span.
    public func startSpan(_ name: String, kind: AgentSpanKind = .internal, attributes: AgentTelemetryAttributes = [:]) -> AgentSpan {
        if let parent = AgentSpan.current, parent.telemetry === self {
            return parent.child(name, kind: kind, attributes: attributes)
        }
        return startRootSpan(name, kind: kind, attributes: attributes)
    }

    /// Sends what is queued and the current metric values (see ``AgentTelemetryExporter/flush()``).
    public func flush() async {
        await exporter.flush()
    }

    /// Flushes and stops the exporter; call it before the process exits.
    public func shutdown() async {
        await exporter.shutdown()
    }

    /// `text` as a content attribute: `nil` unless content capture is on; secrets redacted, cut to
    /// ``Options/maximumContentCharacters``.
    public func content(_ text: @autoclosure () -> String) -> AgentTelemetryValue? {
        guard options.includeContent else { return nil }
        let redacted = TelemetryContentScrubber.scrub(options.secrets.redact(text()))
        guard redacted.count > options.maximumContentCharacters else { return .string(redacted) }
        return .string(String(redacted.prefix(options.maximumContentCharacters)) + "…")
    }

    func spanEnded(_ span: AgentSpanData) {
        exporter.export(span)
    }

    /// Now, in nanoseconds since 1970.
    func nowUnixNano() -> UInt64 {
        Self.unixNano(wallClock.now())
    }

    /// `date` in nanoseconds since 1970 (0 before it).
    public static func unixNano(_ date: Date) -> UInt64 {
        let seconds = date.timeIntervalSince1970
        guard seconds > 0, seconds < 1.8e10 else { return 0 }
        return UInt64(seconds * 1e9)
    }
}
