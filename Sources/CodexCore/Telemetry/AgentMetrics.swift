import Synchronization

/// The metric values the SDK has recorded: cumulative counters and histograms, latest gauges and
/// high-water marks, per instrument and attribute set. Recording is a locked update; exporters read a
/// ``snapshot()`` on their own schedule.
public final class AgentMetrics: Sendable {
    /// One attribute set's value.
    public enum Value: Sendable, Hashable {
        /// A counter's sum.
        case count(Int64)
        /// A gauge's or high-water mark's value.
        case gauge(Double)
        /// A histogram: count, sum, min, max and the count per bucket (one more than the bounds).
        case histogram(count: UInt64, sum: Double, min: Double, max: Double, bucketCounts: [UInt64])
    }

    /// One series: an instrument with one attribute set.
    public struct Point: Sendable, Hashable {
        /// The attributes, sorted by key.
        public var attributes: AgentTelemetryAttributes
        /// The value.
        public var value: Value
    }

    /// Every instrument's points, with the time range they cover.
    public struct Snapshot: Sendable {
        /// When recording started, in nanoseconds since 1970 (the cumulative start).
        public var startTimeUnixNano: UInt64
        /// When the snapshot was taken.
        public var timeUnixNano: UInt64
        /// The instruments with at least one point, in the order first recorded.
        public var series: [(instrument: AgentMetricInstrument, points: [Point])]

        /// The points of the instrument named `name`.
        public func points(_ name: String) -> [Point] {
            series.first { $0.instrument.name == name }?.points ?? []
        }
    }

    private struct Key: Hashable {
        var instrument: String
        var attributes: AgentTelemetryAttributes
    }

    private struct State {
        var instruments: [AgentMetricInstrument] = []
        var order: [Key] = []
        var values: [Key: Value] = [:]
    }

    private let state = Mutex(State())
    private let wallClock: any AgentWallClock
    private let startTimeUnixNano: UInt64

    init(wallClock: any AgentWallClock) {
        self.wallClock = wallClock
        startTimeUnixNano = AgentTelemetry.unixNano(wallClock.now())
    }

    /// One change, for ``apply(_:)``.
    public enum Update: Sendable {
        /// Adds to a counter (negative values are ignored: counters only grow).
        case add(AgentMetricInstrument, Int, AgentTelemetryAttributes)
        /// Records a histogram observation (NaN and infinities are ignored).
        case record(AgentMetricInstrument, Double, AgentTelemetryAttributes)
        /// Sets a gauge, or raises a high-water mark.
        case set(AgentMetricInstrument, Double, AgentTelemetryAttributes)
    }

    /// Adds `value` to a counter (negative values are ignored: counters only grow).
    public func add(_ instrument: AgentMetricInstrument, _ value: Int, attributes: AgentTelemetryAttributes = [:]) {
        state.withLock { Self.apply(.add(instrument, value, attributes), to: &$0) }
    }

    /// Records a histogram observation (NaN and infinities are ignored).
    public func record(_ instrument: AgentMetricInstrument, _ value: Double, attributes: AgentTelemetryAttributes = [:]) {
        state.withLock { Self.apply(.record(instrument, value, attributes), to: &$0) }
    }

    /// Sets a gauge, or raises a high-water mark to `value` when it is higher.
    public func set(_ instrument: AgentMetricInstrument, _ value: Double, attributes: AgentTelemetryAttributes = [:]) {
        state.withLock { Self.apply(.set(instrument, value, attributes), to: &$0) }
    }

    /// Applies several changes under one lock (what a model request's end records at once).
    public func apply(_ updates: [Update]) {
        state.withLock { state in
            for update in updates { Self.apply(update, to: &state) }
        }
    }

    private static func apply(_ update: Update, to state: inout State) {
        switch update {
        case .add(let instrument, let value, let attributes):
            guard value >= 0 else { return }
            change(instrument, attributes, in: &state) { current in
                if case .count(let sum)? = current { return .count(sum &+ Int64(value)) }
                return .count(Int64(value))
            }
        case .record(let instrument, let value, let attributes):
            guard value.isFinite, case .histogram(let bounds) = instrument.kind else { return }
            let bucket = bounds.firstIndex { value <= $0 } ?? bounds.count
            change(instrument, attributes, in: &state) { current in
                guard case .histogram(let count, let sum, let low, let high, var buckets)? = current else {
                    var buckets = [UInt64](repeating: 0, count: bounds.count + 1)
                    buckets[bucket] = 1
                    return .histogram(count: 1, sum: value, min: value, max: value, bucketCounts: buckets)
                }
                buckets[bucket] += 1
                return .histogram(count: count + 1, sum: sum + value, min: Swift.min(low, value), max: Swift.max(high, value), bucketCounts: buckets)
            }
        case .set(let instrument, let value, let attributes):
            guard value.isFinite else { return }
            let keepsHighest = instrument.kind == .highWater
            change(instrument, attributes, in: &state) { current in
                if keepsHighest, case .gauge(let highest)? = current { return .gauge(Swift.max(highest, value)) }
                return .gauge(value)
            }
        }
    }

    /// The values now.
    public func snapshot() -> Snapshot {
        let now = AgentTelemetry.unixNano(wallClock.now())
        return state.withLock { state in
            var byInstrument: [String: [Point]] = [:]
            for key in state.order {
                guard let value = state.values[key] else { continue }
                byInstrument[key.instrument, default: []].append(Point(attributes: key.attributes, value: value))
            }
            let series = state.instruments.compactMap { instrument -> (instrument: AgentMetricInstrument, points: [Point])? in
                guard let points = byInstrument[instrument.name], !points.isEmpty else { return nil }
                return (instrument, points)
            }
            return Snapshot(startTimeUnixNano: startTimeUnixNano, timeUnixNano: max(now, startTimeUnixNano), series: series)
        }
    }

    private static func change(_ instrument: AgentMetricInstrument, _ attributes: AgentTelemetryAttributes, in state: inout State, _ change: (Value?) -> Value) {
        let entries = attributes.entries
        var isSorted = true
        var index = 1
        while isSorted, index < entries.count {
            isSorted = entries[index - 1].key < entries[index].key
            index += 1
        }
        var sorted = attributes
        if !isSorted {
            sorted = AgentTelemetryAttributes()
            for entry in entries.sorted(by: { $0.key < $1.key }) { sorted[entry.key] = entry.value }
        }
        // A name keeps the kind it was first recorded with: a host instrument reusing the name with
        // another kind is ignored rather than exported under the wrong type (which a collector refuses).
        if let known = state.instruments.first(where: { $0.name == instrument.name }), known.kind != instrument.kind { return }
        let key = Key(instrument: instrument.name, attributes: sorted)
        let current = state.values[key]
        if current == nil {
            if !state.instruments.contains(where: { $0.name == instrument.name }) { state.instruments.append(instrument) }
            state.order.append(key)
        }
        state.values[key] = change(current)
    }
}
