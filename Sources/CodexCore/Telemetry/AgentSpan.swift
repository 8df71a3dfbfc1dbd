import Synchronization

/// A span in progress: a turn, a model request, a tool call. The SDK makes them; a host reads the
/// current one with ``current`` (for example to start its own child spans inside a tool).
///
/// Ending is once only: later calls change nothing. A span released without ``end(at:)`` (its task was
/// cancelled mid-way) ends when it is released, marked `codexkit.span.abandoned`.
public final class AgentSpan: Sendable {
    /// The span the current task's SDK work runs under, if telemetry is on.
    @TaskLocal public static var current: AgentSpan?

    /// The span's name.
    public let name: String
    /// Its kind.
    public let kind: AgentSpanKind
    /// Its IDs.
    public let context: AgentSpanContext
    /// Its parent's span ID (big-endian), `nil` for a root span.
    let parentID: UInt64?
    /// Its parent's span ID, `nil` for a root span.
    public var parentSpanID: [UInt8]? { parentID.map(AgentSpanContext.bytes) }
    /// The telemetry it reports to.
    public let telemetry: AgentTelemetry
    /// When it started, in nanoseconds since 1970.
    public let startTimeUnixNano: UInt64

    private struct State {
        var attributes: AgentTelemetryAttributes
        var events: [AgentSpanEvent] = []
        var status = AgentSpanStatus.unset
        var ended = false
    }

    private let state: Mutex<State>

    init(name: String, kind: AgentSpanKind, context: AgentSpanContext, parentID: UInt64?, telemetry: AgentTelemetry, attributes: AgentTelemetryAttributes) {
        self.name = name
        self.kind = kind
        self.context = context
        self.parentID = parentID
        self.telemetry = telemetry
        startTimeUnixNano = telemetry.nowUnixNano()
        state = Mutex(State(attributes: attributes))
    }

    deinit {
        let abandoned = state.withLock { state -> State? in
            guard !state.ended else { return nil }
            state.ended = true
            state.attributes["codexkit.span.abandoned"] = .bool(true)
            return state
        }
        if let abandoned { deliver(abandoned, end: telemetry.nowUnixNano()) }
    }

    /// Whether the span is exported when it ends (its trace is sampled).
    public var isRecording: Bool { context.isSampled }

    /// Sets (or, with `nil`, removes) an attribute.
    public func setAttribute(_ key: String, _ value: AgentTelemetryValue?) {
        state.withLock { state in
            guard !state.ended else { return }
            state.attributes[key] = value
        }
    }

    /// Sets several attributes at once (one lock).
    public func setAttributes(_ attributes: AgentTelemetryAttributes) {
        state.withLock { state in
            guard !state.ended else { return }
            for entry in attributes.entries { state.attributes[entry.key] = entry.value }
        }
    }

    /// Changes the attributes in place under one lock (and, when `status` is given, sets it): what the
    /// SDK's own spans use to add a response's attributes without building a list first.
    package func updateAttributes(status: AgentSpanStatus? = nil, _ body: (inout AgentTelemetryAttributes) -> Void) {
        state.withLock { state in
            guard !state.ended else { return }
            body(&state.attributes)
            if let status { state.status = status }
        }
    }

    /// Sets an attribute to an optional count: nothing when the count is unknown.
    public func setAttribute(_ key: String, count: Int?) {
        guard let count else { return }
        setAttribute(key, .int(Int64(count)))
    }

    /// Adds a timestamped event.
    public func addEvent(_ name: String, attributes: AgentTelemetryAttributes = [:]) {
        let now = telemetry.nowUnixNano()
        state.withLock { state in
            guard !state.ended, state.events.count < 128 else { return }
            state.events.append(AgentSpanEvent(name: name, timeUnixNano: now, attributes: attributes))
        }
    }

    /// Sets the status.
    public func setStatus(_ status: AgentSpanStatus) {
        state.withLock { state in
            guard !state.ended else { return }
            state.status = status
        }
    }

    /// Marks the span failed with an error's stable code (`error.type`): never its message, which may
    /// quote content.
    public func recordFailure(code: String) {
        state.withLock { state in
            guard !state.ended else { return }
            state.attributes["error.type"] = .string(code)
            state.status = .error(code)
        }
    }

    /// A value set on the span so far.
    public func attribute(_ key: String) -> AgentTelemetryValue? {
        state.withLock { $0.attributes[key] }
    }

    /// Ends the span now (or at `endTimeUnixNano`) and hands it to the exporter. Once only.
    public func end(at endTimeUnixNano: UInt64? = nil) {
        let ended = state.withLock { state -> State? in
            guard !state.ended else { return nil }
            state.ended = true
            return state
        }
        if let ended { deliver(ended, end: endTimeUnixNano ?? telemetry.nowUnixNano()) }
    }

    /// A child span of this one (same trace).
    public func child(_ name: String, kind: AgentSpanKind = .internal, attributes: AgentTelemetryAttributes = [:]) -> AgentSpan {
        AgentSpan(name: name, kind: kind, context: context.child(), parentID: context.spanValue, telemetry: telemetry, attributes: attributes)
    }

    /// Runs `operation` with this span as ``current``.
    public func withCurrent<Result>(
        isolation: isolated (any Actor)? = #isolation, _ operation: () async throws -> Result
    ) async rethrows -> Result {
        try await AgentSpan.$current.withValue(self, operation: operation)
    }

    private func deliver(_ state: State, end: UInt64) {
        guard isRecording else { return }
        telemetry.spanEnded(AgentSpanData(
            name: name, kind: kind, context: context, parentID: parentID, startTimeUnixNano: startTimeUnixNano,
            endTimeUnixNano: max(end, startTimeUnixNano), attributes: state.attributes, events: state.events, status: state.status
        ))
    }
}
