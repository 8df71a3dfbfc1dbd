/// A metric the SDK records: its name, unit, description and kind. The SDK's own instruments are the
/// static members; a host may record its own through ``AgentMetrics``.
public struct AgentMetricInstrument: Sendable, Hashable {
    /// How values combine.
    public enum Kind: Sendable, Hashable {
        /// A monotonic sum of whole numbers (exported as a cumulative OTLP sum).
        case counter
        /// A distribution over the given explicit bucket bounds (exported as a cumulative histogram).
        case histogram(bounds: [Double])
        /// The latest value.
        case gauge
        /// The largest value seen (exported as a gauge).
        case highWater
    }

    /// The metric's name.
    public let name: String
    /// Its UCUM unit, e.g. `s` or `{token}`.
    public let unit: String
    /// What it measures.
    public let description: String
    /// Its kind.
    public let kind: Kind

    /// Creates an instrument.
    public init(name: String, unit: String, description: String, kind: Kind) {
        self.name = name
        self.unit = unit
        self.description = description
        self.kind = kind
    }

    /// The bucket bounds the GenAI conventions give for token counts.
    public static let tokenBounds: [Double] = [1, 4, 16, 64, 256, 1_024, 4_096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304, 16_777_216, 67_108_864]
    /// The bucket bounds the GenAI conventions give for durations in seconds.
    public static let durationBounds: [Double] = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]

    /// `gen_ai.client.token.usage`: tokens per model request, by `gen_ai.token.type` (`input`, `output`).
    public static let tokenUsage = AgentMetricInstrument(
        name: "gen_ai.client.token.usage", unit: "{token}", description: "Tokens used per model request", kind: .histogram(bounds: tokenBounds)
    )
    /// `gen_ai.client.operation.duration`: model request durations.
    public static let operationDuration = AgentMetricInstrument(
        name: "gen_ai.client.operation.duration", unit: "s", description: "Model request duration", kind: .histogram(bounds: durationBounds)
    )
    /// `gen_ai.client.operation.time_to_first_chunk`: from sending a model request to its first output.
    public static let timeToFirstChunk = AgentMetricInstrument(
        name: "gen_ai.client.operation.time_to_first_chunk", unit: "s", description: "Time to the first output of a model request",
        kind: .histogram(bounds: durationBounds)
    )
    /// `codexkit.tokens`: a running count of tokens by `codexkit.token.type` (`input`, `cached_input`,
    /// `cache_write_input`, `output`, `reasoning_output`) and model.
    public static let tokens = AgentMetricInstrument(name: "codexkit.tokens", unit: "{token}", description: "Tokens by kind and model", kind: .counter)
    /// `codexkit.tool.duration`: tool call durations, approval wait included.
    public static let toolDuration = AgentMetricInstrument(
        name: "codexkit.tool.duration", unit: "s", description: "Tool call duration", kind: .histogram(bounds: durationBounds)
    )
    /// `codexkit.request.retries`: model requests sent again after a transient failure.
    public static let retries = AgentMetricInstrument(name: "codexkit.request.retries", unit: "{retry}", description: "Model requests retried", kind: .counter)
    /// `codexkit.rate_limit.remaining`: percent left of a rate-limit window, by family and window.
    public static let rateLimitRemaining = AgentMetricInstrument(
        name: "codexkit.rate_limit.remaining", unit: "%", description: "Percent left of a rate-limit window", kind: .gauge
    )
    /// `codexkit.turns`: turns ended, by `codexkit.turn.outcome`.
    public static let turns = AgentMetricInstrument(name: "codexkit.turns", unit: "{turn}", description: "Turns by outcome", kind: .counter)
    /// `codexkit.event_queue.high_water`: the most events a turn's stream held for its consumer at once.
    public static let eventQueueHighWater = AgentMetricInstrument(
        name: "codexkit.event_queue.high_water", unit: "{event}", description: "The most events buffered for a consumer at once", kind: .highWater
    )
    /// `codexkit.telemetry.spans.dropped`: spans the exporter dropped because its queue was full.
    public static let droppedSpans = AgentMetricInstrument(
        name: "codexkit.telemetry.spans.dropped", unit: "{span}", description: "Spans dropped by a full export queue", kind: .counter
    )
}
