import CodexCore
import CodexKitTesting
import Foundation
import Testing

/// Series located once and updated through handles: the same values, order and refusals as updates
/// that name their attributes.
@Suite struct AgentMetricsHandleTests {
    private let completed: AgentTelemetryAttributes = ["codexkit.turn.outcome": "completed"]

    @Test func aMemoMakesItsHandlesOnceAndTheyReachTheSameSeriesAsNamedUpdates() {
        let metrics = AgentTelemetry(exporter: InMemoryTelemetryExporter()).metrics
        var made = 0
        let first = metrics.handles(memo: AgentMetrics.MemoKey("turn", "completed")) {
            made += 1
            return [(.turns, completed), (.eventQueueHighWater, [:])]
        }
        let second = metrics.handles(memo: AgentMetrics.MemoKey("turn", "completed")) {
            made += 1
            return []
        }
        #expect(made == 1)
        #expect(first == second)
        #expect(first.count == 2)
        metrics.apply(bound: [.add(first[0], 2), .set(first[1], 7), .set(first[1], 3)])
        metrics.add(.turns, 1, attributes: completed)
        metrics.set(.eventQueueHighWater, 5)
        let snapshot = metrics.snapshot()
        #expect(snapshot.series.map(\.instrument.name) == ["codexkit.turns", "codexkit.event_queue.high_water"])
        #expect(snapshot.points("codexkit.turns").map(\.value) == [.count(3)])
        #expect(snapshot.points("codexkit.event_queue.high_water").map(\.value) == [.gauge(7)])
    }

    @Test func aBoundSeriesIsExportedFromItsFirstUpdateInTheOrderOfFirstUpdates() {
        let metrics = AgentTelemetry(exporter: InMemoryTelemetryExporter()).metrics
        let handles = metrics.handles(memo: AgentMetrics.MemoKey("chat", nil)) {
            [(.timeToFirstChunk, [:]), (.operationDuration, [:]), (.tokens, ["codexkit.token.type": "input"])]
        }
        #expect(metrics.snapshot().series.isEmpty)
        metrics.apply(bound: [.record(handles[1], 0.03)])
        metrics.add(.retries, 1)
        metrics.apply(bound: [.add(handles[2], 40)])
        let snapshot = metrics.snapshot()
        #expect(snapshot.series.map(\.instrument.name) == ["gen_ai.client.operation.duration", "codexkit.request.retries", "codexkit.tokens"])
        var buckets = [UInt64](repeating: 0, count: AgentMetricInstrument.durationBounds.count + 1)
        buckets[2] = 1
        #expect(snapshot.points("gen_ai.client.operation.duration").map(\.value) == [
            .histogram(count: 1, sum: 0.03, min: 0.03, max: 0.03, bucketCounts: buckets),
        ])
        #expect(snapshot.points("codexkit.tokens").map(\.value) == [.count(40)])
        #expect(snapshot.points("gen_ai.client.operation.time_to_first_chunk").isEmpty)
    }

    @Test func aHandleForAnotherKindOfAKnownNameIsNilAndChangesNothing() {
        let metrics = AgentTelemetry(exporter: InMemoryTelemetryExporter()).metrics
        let counter = AgentMetricInstrument(name: "host.things", unit: "{thing}", description: "Things", kind: .counter)
        let histogram = AgentMetricInstrument(name: "host.things", unit: "s", description: "Things", kind: .histogram(bounds: [1]))
        metrics.add(counter, 2)
        let none = AgentTelemetryAttributes()
        let handles = metrics.handles(memo: AgentMetrics.MemoKey("host", "things")) { [(histogram, none), (counter, none)] }
        #expect(handles[0] == nil)
        #expect(handles[1] != nil)
        metrics.apply(bound: [.record(handles[0], 0.5), .add(handles[1], 3)])
        let snapshot = metrics.snapshot()
        #expect(snapshot.series.map(\.instrument) == [counter])
        #expect(snapshot.points("host.things").map(\.value) == [.count(5)])
    }

    @Test func invalidValuesThroughHandlesAreIgnoredLikeNamedOnes() {
        let metrics = AgentTelemetry(exporter: InMemoryTelemetryExporter()).metrics
        let handles = metrics.handles(memo: AgentMetrics.MemoKey("mixed", nil)) {
            [(.turns, [:]), (.tokenUsage, [:]), (.eventQueueHighWater, [:]), (.rateLimitRemaining, [:])]
        }
        metrics.apply(bound: [
            .add(handles[0], -1), .record(handles[1], .nan), .record(handles[1], .infinity), .set(handles[2], -.infinity), .set(handles[3], .nan),
        ])
        #expect(metrics.snapshot().series.isEmpty)
        // A counter's zero is a value once it was added to; a histogram or gauge without a value is not exported.
        metrics.apply(bound: [.add(handles[0], 0)])
        #expect(metrics.snapshot().series.map(\.instrument.name) == ["codexkit.turns"])
        #expect(metrics.snapshot().points("codexkit.turns").map(\.value) == [.count(0)])
    }

    @Test func pastTheMemoLimitHandlesAreMadeAgainAndStillReachTheirSeries() {
        let metrics = AgentTelemetry(exporter: InMemoryTelemetryExporter()).metrics
        var made = 0
        for model in 0...AgentMetrics.memoLimit {
            _ = metrics.handles(memo: AgentMetrics.MemoKey("chat", "m\(model)")) {
                made += 1
                return [(.tokens, ["gen_ai.request.model": .string("m\(model)")])]
            }
        }
        #expect(made == AgentMetrics.memoLimit + 1)
        let lastKey = AgentMetrics.MemoKey("chat", "m\(AgentMetrics.memoLimit)")
        let again = metrics.handles(memo: lastKey) {
            made += 1
            return [(.tokens, ["gen_ai.request.model": .string("m\(AgentMetrics.memoLimit)")])]
        }
        #expect(made == AgentMetrics.memoLimit + 2)
        let kept = metrics.handles(memo: AgentMetrics.MemoKey("chat", "m0")) {
            made += 1
            return []
        }
        #expect(made == AgentMetrics.memoLimit + 2)
        metrics.apply(bound: [.add(again[0], 4), .add(kept[0], 1)])
        metrics.add(.tokens, 2, attributes: ["gen_ai.request.model": .string("m\(AgentMetrics.memoLimit)")])
        let points = metrics.snapshot().points("codexkit.tokens")
        #expect(points.map(\.value) == [.count(6), .count(1)])
        #expect(points.map { $0.attributes["gen_ai.request.model"] } == [.string("m\(AgentMetrics.memoLimit)"), .string("m0")])
    }
}

/// A change that does not suit a series' kind is ignored, whether it names the series or goes through a
/// handle: it neither changes the value nor makes the series exported.
@Suite struct AgentMetricsKindTests {
    @Test func additionsGoToCountersObservationsToHistogramsValuesToGauges() {
        let metrics = AgentTelemetry(exporter: InMemoryTelemetryExporter()).metrics
        let none = AgentTelemetryAttributes()
        let handles = metrics.handles(memo: AgentMetrics.MemoKey("kinds", nil)) {
            [(.turns, none), (.tokenUsage, none), (.eventQueueHighWater, none)]
        }
        metrics.apply(bound: [.set(handles[0], 5), .record(handles[0], 1), .add(handles[1], 3), .set(handles[1], 2), .add(handles[2], 4), .record(handles[2], 1)])
        metrics.set(.turns, 9)
        metrics.add(.tokenUsage, 2)
        metrics.add(.eventQueueHighWater, 7)
        #expect(metrics.snapshot().series.isEmpty)
        metrics.apply(bound: [.add(handles[0], 2), .record(handles[1], 3), .set(handles[2], 6)])
        let snapshot = metrics.snapshot()
        #expect(snapshot.series.map(\.instrument.name) == ["codexkit.turns", "gen_ai.client.token.usage", "codexkit.event_queue.high_water"])
        #expect(snapshot.points("codexkit.turns").map(\.value) == [.count(2)])
        var buckets = [UInt64](repeating: 0, count: AgentMetricInstrument.tokenBounds.count + 1)
        buckets[1] = 1
        #expect(snapshot.points("gen_ai.client.token.usage").map(\.value) == [.histogram(count: 1, sum: 3, min: 3, max: 3, bucketCounts: buckets)])
        #expect(snapshot.points("codexkit.event_queue.high_water").map(\.value) == [.gauge(6)])
    }
}
