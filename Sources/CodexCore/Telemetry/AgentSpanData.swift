/// What a span describes to OpenTelemetry: its role in a trace.
public enum AgentSpanKind: Int, Sendable, Hashable {
    /// Work inside the process (a turn, a tool call).
    case `internal` = 1
    /// A request to another service (a model request, an MCP call).
    case client = 3
}

/// How a span ended.
public enum AgentSpanStatus: Sendable, Hashable {
    /// Not set: the default.
    case unset
    /// Succeeded.
    case ok
    /// Failed; the description is a stable error code, never content.
    case error(String)
}

/// A timestamped note on a span (a retry scheduled, a steer accepted).
public struct AgentSpanEvent: Sendable, Hashable {
    /// The event's name.
    public var name: String
    /// When, in nanoseconds since 1970.
    public var timeUnixNano: UInt64
    /// Its attributes.
    public var attributes: AgentTelemetryAttributes

    /// Creates an event.
    public init(name: String, timeUnixNano: UInt64, attributes: AgentTelemetryAttributes = [:]) {
        self.name = name
        self.timeUnixNano = timeUnixNano
        self.attributes = attributes
    }
}

/// An ended span, as handed to an ``AgentTelemetryExporter``.
public struct AgentSpanData: Sendable, Hashable {
    /// The span's name, e.g. `chat gpt-5.2`.
    public var name: String
    /// Its kind.
    public var kind: AgentSpanKind
    /// Its trace and span IDs.
    public var context: AgentSpanContext
    /// The parent span's ID (big-endian), `nil` for a root span.
    package var parentID: UInt64?
    /// The parent span's ID, `nil` for a root span.
    public var parentSpanID: [UInt8]? {
        get { parentID.map(AgentSpanContext.bytes) }
        set { parentID = newValue.flatMap { $0.count == 8 ? AgentSpanContext.word($0[0..<8]) : nil } }
    }
    /// Start, in nanoseconds since 1970.
    public var startTimeUnixNano: UInt64
    /// End, in nanoseconds since 1970.
    public var endTimeUnixNano: UInt64
    /// Its attributes, in the order they were set.
    public var attributes: AgentTelemetryAttributes
    /// Its events, in order.
    public var events: [AgentSpanEvent]
    /// How it ended.
    public var status: AgentSpanStatus

    /// Creates span data.
    public init(
        name: String, kind: AgentSpanKind, context: AgentSpanContext, parentSpanID: [UInt8]?, startTimeUnixNano: UInt64,
        endTimeUnixNano: UInt64, attributes: AgentTelemetryAttributes, events: [AgentSpanEvent] = [], status: AgentSpanStatus = .unset
    ) {
        self.name = name
        self.kind = kind
        self.context = context
        parentID = parentSpanID.flatMap { $0.count == 8 ? AgentSpanContext.word($0[0..<8]) : nil }
        self.startTimeUnixNano = startTimeUnixNano
        self.endTimeUnixNano = endTimeUnixNano
        self.attributes = attributes
        self.events = events
        self.status = status
    }

    package init(
        name: String, kind: AgentSpanKind, context: AgentSpanContext, parentID: UInt64?, startTimeUnixNano: UInt64,
        endTimeUnixNano: UInt64, attributes: AgentTelemetryAttributes, events: [AgentSpanEvent], status: AgentSpanStatus
    ) {
        self.name = name
        self.kind = kind
        self.context = context
        self.parentID = parentID
        self.startTimeUnixNano = startTimeUnixNano
        self.endTimeUnixNano = endTimeUnixNano
        self.attributes = attributes
        self.events = events
        self.status = status
    }

    /// The duration in seconds.
    public var durationSeconds: Double {
        endTimeUnixNano >= startTimeUnixNano ? Double(endTimeUnixNano - startTimeUnixNano) / 1e9 : 0
    }
}
