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

    /// One series' running values, updated in place (no copy of the buckets). A series exists from its
    /// first update, or from being bound; a bound series nobody updated yet is not exported.
    private struct Series {
        let key: Key
        let instrument: AgentMetricInstrument
        var kind: AgentMetricInstrument.Kind { instrument.kind }
        var used = false
        var count: Int64 = 0
        var sum = 0.0
        var low = Double.infinity
        var high = -Double.infinity
        var buckets: [UInt64] = []
        var gauge = 0.0
    }

    private struct State {
        /// The instruments with a series in use, in the order first used.
        var instruments: [AgentMetricInstrument] = []
        var kinds: [String: AgentMetricInstrument.Kind] = [:]
        var index: [Key: Int] = [:]
        var series: [Series] = []
        /// The series in use, in the order first updated.
        var order: [Int] = []
        var memo: [MemoKey: [Handle?]] = [:]
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
        let (instrument, change, attributes): (AgentMetricInstrument, Change, AgentTelemetryAttributes) = switch update {
        case .add(let instrument, let value, let attributes): (instrument, .add(value), attributes)
        case .record(let instrument, let value, let attributes): (instrument, .record(value), attributes)
        case .set(let instrument, let value, let attributes): (instrument, .set(value), attributes)
        }
        // Checked before the series is looked up, so an update that would be ignored creates none.
        guard change.isValid, change.suits(instrument.kind), let index = locate(instrument, attributes, in: &state) else { return }
        Self.change(change, at: index, in: &state)
    }

    /// A series located once (one instrument with one attribute set): updates through it skip hashing
    /// and comparing the attributes. Valid only for the ``AgentMetrics`` that made it.
    package struct Handle: Sendable, Hashable {
        fileprivate let index: Int
    }

    /// What ``handles(memo:_:)`` keeps a list of handles under: a domain (what records them) and a value
    /// (for example a model's name).
    package struct MemoKey: Sendable, Hashable {
        let domain: String
        let value: String?

        /// Creates a key.
        package init(_ domain: String, _ value: String?) {
            self.domain = domain
            self.value = value
        }
    }

    /// A change through a handle; a `nil` handle (a series refused for its kind) changes nothing.
    package enum BoundUpdate: Sendable {
        /// Adds to a counter (negative values are ignored).
        case add(Handle?, Int)
        /// Records a histogram observation (NaN and infinities are ignored).
        case record(Handle?, Double)
        /// Sets a gauge, or raises a high-water mark.
        case set(Handle?, Double)
    }

    /// The most lists ``handles(memo:_:)`` keeps; past it, lists are made again on each call.
    package static let memoLimit = 256

    /// Handles for the series `series` lists, in its order, made once per `key` and kept: what a model
    /// request records at its end costs one lookup of `key` instead of a hash of every attribute set.
    /// A series is not exported until it is updated, but making its handle fixes its instrument's kind
    /// (a later update of that name with another kind is ignored, as after a first update).
    package func handles(memo key: MemoKey, _ series: () -> [(AgentMetricInstrument, AgentTelemetryAttributes)]) -> [Handle?] {
        if let known = state.withLock({ $0.memo[key] }) { return known }
        let wanted = series()
        return state.withLock { state in
            if let known = state.memo[key] { return known }
            let handles = wanted.map { instrument, attributes in Self.locate(instrument, attributes, in: &state).map(Handle.init) }
            if state.memo.count < Self.memoLimit { state.memo[key] = handles }
            return handles
        }
    }

    /// Applies several changes through handles under one lock.
    package func apply(bound updates: [BoundUpdate]) {
        state.withLock { state in
            for update in updates {
                let (handle, change): (Handle?, Change) = switch update {
                case .add(let handle, let value): (handle, .add(value))
                case .record(let handle, let value): (handle, .record(value))
                case .set(let handle, let value): (handle, .set(value))
                }
                guard let index = handle?.index, index < state.series.count else { continue }
                Self.change(change, at: index, in: &state)
            }
        }
    }

    /// The index of the series of `instrument` with `attributes` (one hash), created when it is new;
    /// `nil` when the name was first used with another kind: such an update is ignored rather than
    /// exported under the wrong type, which a collector refuses.
    private static func locate(_ instrument: AgentMetricInstrument, _ attributes: AgentTelemetryAttributes, in state: inout State) -> Int? {
        let key = Key(instrument: instrument.name, attributes: attributes)
        if let index = state.index[key] {
            return sameKind(state.series[index].kind, instrument.kind) ? index : nil
        }
        if let known = state.kinds[instrument.name] {
            guard sameKind(known, instrument.kind) else { return nil }
        } else {
            state.kinds[instrument.name] = instrument.kind
        }
        state.series.append(Series(key: key, instrument: instrument))
        state.index[key] = state.series.count - 1
        return state.series.count - 1
    }

    /// A value change of one series, with the rules every update follows, named or through a handle.
    private enum Change {
        case add(Int)
        case record(Double)
        case set(Double)

        /// Counters only grow; NaN and infinities are never recorded.
        var isValid: Bool {
            switch self {
            case .add(let value): value >= 0
            case .record(let value), .set(let value): value.isFinite
            }
        }

        /// An addition suits a counter, an observation a histogram, a value a gauge or high-water mark.
        func suits(_ kind: AgentMetricInstrument.Kind) -> Bool {
            switch (self, kind) {
            case (.add, .counter), (.record, .histogram), (.set, .gauge), (.set, .highWater): true
            default: false
            }
        }
    }

    /// Applies `change` to the series at `index` in place when it is valid and suits the series' kind
    /// (anything else is ignored). The first change puts the series (and, the first time, its
    /// instrument) in the export order.
    private static func change(_ change: Change, at index: Int, in state: inout State) {
        let kind = state.series[index].kind
        guard change.isValid, change.suits(kind) else { return }
        if !state.series[index].used {
            state.series[index].used = true
            state.order.append(index)
            let instrument = state.series[index].instrument
            if !state.instruments.contains(where: { $0.name == instrument.name }) { state.instruments.append(instrument) }
        }
        switch change {
        case .add(let value):
            state.series[index].count &+= Int64(value)
        case .record(let value):
            guard case .histogram(let bounds) = kind else { return }
            let bucket = bounds.firstIndex { value <= $0 } ?? bounds.count
            if state.series[index].buckets.isEmpty { state.series[index].buckets = [UInt64](repeating: 0, count: bounds.count + 1) }
            state.series[index].buckets[bucket] += 1
            state.series[index].count += 1
            state.series[index].sum += value
            state.series[index].low = Swift.min(state.series[index].low, value)
            state.series[index].high = Swift.max(state.series[index].high, value)
        case .set(let value):
            state.series[index].gauge = kind == .highWater && state.series[index].count > 0 ? Swift.max(state.series[index].gauge, value) : value
            state.series[index].count = 1
        }
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
            for index in state.order {
                let series = state.series[index]
                let value: Value
                switch series.kind {
                case .counter: value = .count(series.count)
                case .gauge, .highWater:
                    guard series.count > 0 else { continue }
                    value = .gauge(series.gauge)
                case .histogram:
                    guard series.count > 0 else { continue }
                    value = .histogram(count: UInt64(series.count), sum: series.sum, min: series.low, max: series.high, bucketCounts: series.buckets)
                }
                byInstrument[series.key.instrument, default: []].append(Point(attributes: series.key.attributes, value: value))
            }
            let series = state.instruments.compactMap { instrument -> (instrument: AgentMetricInstrument, points: [Point])? in
                guard let points = byInstrument[instrument.name], !points.isEmpty else { return nil }
                return (instrument, points)
            }
            return Snapshot(startTimeUnixNano: startTimeUnixNano, timeUnixNano: max(now, startTimeUnixNano), series: series)
        }
    }
}
