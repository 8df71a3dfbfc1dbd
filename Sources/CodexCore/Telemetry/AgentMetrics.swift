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
        /// The attributes, in the order the series was first recorded with.
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

    /// An instrument's series: the same attributes in any order are the same series (hashed and
    /// compared without regard to order, so nothing is sorted on the recording path).
    private struct Key: Hashable {
        var instrument: String
        var attributes: AgentTelemetryAttributes

        func hash(into hasher: inout Hasher) {
            hasher.combine(instrument)
            hasher.combine(attributes.count)
            var combined = 0
            for entry in attributes.entries {
                var one = Hasher()
                one.combine(entry.key)
                one.combine(entry.value)
                combined ^= one.finalize()
            }
            hasher.combine(combined)
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            guard lhs.instrument == rhs.instrument, lhs.attributes.count == rhs.attributes.count else { return false }
            return lhs.attributes.entries.allSatisfy { entry in rhs.attributes.entries.contains { $0.key == entry.key && $0.value == entry.value } }
        }
    }

    /// One series' running values, updated in place (one hash per update, no copy of the buckets).
    private struct Series {
        let kind: AgentMetricInstrument.Kind
        var count: Int64 = 0
        var sum = 0.0
        var low = Double.infinity
        var high = -Double.infinity
        var buckets: [UInt64] = []
        var gauge = 0.0
    }

    private struct State {
        var instruments: [AgentMetricInstrument] = []
        var kinds: [String: AgentMetricInstrument.Kind] = [:]
        var order: [Key] = []
        var series: [Key: Series] = [:]
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
            withSeries(instrument, attributes, in: &state) { $0.count &+= Int64(value) }
        case .record(let instrument, let value, let attributes):
            guard value.isFinite, case .histogram(let bounds) = instrument.kind else { return }
            let bucket = bounds.firstIndex { value <= $0 } ?? bounds.count
            withSeries(instrument, attributes, in: &state) { series in
                if series.buckets.isEmpty { series.buckets = [UInt64](repeating: 0, count: bounds.count + 1) }
                series.buckets[bucket] += 1
                series.count += 1
                series.sum += value
                series.low = Swift.min(series.low, value)
                series.high = Swift.max(series.high, value)
            }
        case .set(let instrument, let value, let attributes):
            guard value.isFinite else { return }
            let keepsHighest = instrument.kind == .highWater
            withSeries(instrument, attributes, in: &state) { series in
                series.gauge = keepsHighest && series.count > 0 ? Swift.max(series.gauge, value) : value
                series.count = 1
            }
        }
    }

    /// Runs `change` on the series of `instrument` with `attributes`, in place: one hash for a series
    /// that exists. The first update of a series registers it (and the instrument); an update whose
    /// kind differs from the kind its name was first recorded with is ignored rather than exported
    /// under the wrong type, which a collector refuses.
    private static func withSeries(
        _ instrument: AgentMetricInstrument, _ attributes: AgentTelemetryAttributes, in state: inout State, _ change: (inout Series) -> Void
    ) {
        let key = Key(instrument: instrument.name, attributes: attributes)
        if let index = state.series.index(forKey: key) {
            guard sameKind(state.series.values[index].kind, instrument.kind) else { return }
            change(&state.series.values[index])
            return
        }
        if let known = state.kinds[instrument.name] {
            guard sameKind(known, instrument.kind) else { return }
        } else {
            state.kinds[instrument.name] = instrument.kind
            state.instruments.append(instrument)
        }
        var series = Series(kind: instrument.kind)
        change(&series)
        state.order.append(key)
        state.series[key] = series
    }

    private static func sameKind(_ lhs: AgentMetricInstrument.Kind, _ rhs: AgentMetricInstrument.Kind) -> Bool {
        switch (lhs, rhs) {
        case (.counter, .counter), (.gauge, .gauge), (.highWater, .highWater): return true
        case (.histogram(let left), .histogram(let right)): return left.count == right.count && left == right
        default: return false
        }
    }

    /// The values now.
    public func snapshot() -> Snapshot {
        let now = AgentTelemetry.unixNano(wallClock.now())
        return state.withLock { state in
            var byInstrument: [String: [Point]] = [:]
            for key in state.order {
                guard let series = state.series[key], let kind = state.kinds[key.instrument] else { continue }
                let value: Value
                switch kind {
                case .counter: value = .count(series.count)
                case .gauge, .highWater:
                    guard series.count > 0 else { continue }
                    value = .gauge(series.gauge)
                case .histogram:
                    guard series.count > 0 else { continue }
                    value = .histogram(count: UInt64(series.count), sum: series.sum, min: series.low, max: series.high, bucketCounts: series.buckets)
                }
                byInstrument[key.instrument, default: []].append(Point(attributes: key.attributes, value: value))
            }
            let series = state.instruments.compactMap { instrument -> (instrument: AgentMetricInstrument, points: [Point])? in
                guard let points = byInstrument[instrument.name], !points.isEmpty else { return nil }
                return (instrument, points)
            }
            return Snapshot(startTimeUnixNano: startTimeUnixNano, timeUnixNano: max(now, startTimeUnixNano), series: series)
        }
    }
}
