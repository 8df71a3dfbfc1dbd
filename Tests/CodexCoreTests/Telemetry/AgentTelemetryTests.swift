import CodexCore
import CodexKitTesting
import Foundation
import Testing

@Suite struct AgentSpanContextTests {
    @Test func parsesAndFormatsTraceparent() throws {
        let context = try #require(AgentSpanContext(traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"))
        #expect(context.traceIDHex == "0af7651916cd43dd8448eb211c80319c")
        #expect(context.spanIDHex == "b7ad6b7169203331")
        #expect(context.isSampled)
        #expect(context.traceparent == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        let unsampled = try #require(AgentSpanContext(traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"))
        #expect(!unsampled.isSampled)
        // A later version is read by its first four fields.
        #expect(AgentSpanContext(traceparent: "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra") != nil)
    }

    @Test(arguments: [
        "", "00", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331", "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
        "00-00000000000000000000000000000000-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
        "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
        "00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-1",
        "00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01",
    ])
    func refusesMalformedTraceparent(_ header: String) {
        #expect(AgentSpanContext(traceparent: header) == nil)
    }

    @Test func childrenKeepTheTraceAndGetNewSpanIDs() {
        let root = AgentSpanContext.newTrace()
        let child = root.child()
        #expect(child.traceID == root.traceID)
        #expect(child.spanID != root.spanID)
        #expect(child.spanID.count == 8)
        #expect(root.traceID.count == 16)
    }
}

@Suite struct AgentSpanTests {
    @Test func aSpanEndsOnceWithItsAttributesInOrder() throws {
        let exporter = InMemoryTelemetryExporter()
        let clock = ManualWallClock(Date(timeIntervalSince1970: 1_000))
        let telemetry = AgentTelemetry(exporter: exporter, wallClock: clock)
        let span = telemetry.startRootSpan("work", attributes: ["b": 1, "a": "x"])
        span.setAttribute("b", 2)
        span.setAttribute("c", true)
        clock.advance(by: 1.5)
        span.recordFailure(code: "boom")
        span.end()
        span.end()
        span.setAttribute("late", 1)
        let ended = try #require(exporter.spans.first)
        #expect(exporter.spans.count == 1)
        #expect(ended.attributes.entries.map(\.key) == ["b", "a", "c", "error.type"])
        #expect(ended.attributes["b"] == 2)
        #expect(ended.status == .error("boom"))
        #expect(ended.startTimeUnixNano == 1_000_000_000_000)
        #expect(ended.endTimeUnixNano == 1_001_500_000_000)
        #expect(ended.durationSeconds == 1.5)
        #expect(ended.parentSpanID == nil)
    }

    @Test func aSpanReleasedWithoutEndingEndsAbandoned() throws {
        let exporter = InMemoryTelemetryExporter()
        let telemetry = AgentTelemetry(exporter: exporter)
        do {
            let span = telemetry.startRootSpan("dropped")
            span.setAttribute("k", "v")
        }
        let ended = try #require(exporter.spans.first)
        #expect(ended.name == "dropped")
        #expect(ended.attributes["codexkit.span.abandoned"] == true)
    }

    @Test func spansNestUnderTheCurrentSpanAndTheHostsParent() async throws {
        let exporter = InMemoryTelemetryExporter()
        let telemetry = AgentTelemetry(exporter: exporter)
        let host = try #require(AgentSpanContext(traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"))
        await AgentTelemetry.withParent(host) {
            let root = telemetry.startRootSpan("root")
            await root.withCurrent {
                telemetry.startSpan("inner").end()
            }
            root.end()
        }
        let inner = try #require(exporter.spans(named: "inner").first)
        let root = try #require(exporter.spans(named: "root").first)
        #expect(root.context.traceIDHex == "0af7651916cd43dd8448eb211c80319c")
        #expect(root.parentSpanID.map(AgentSpanContext.hex) == "b7ad6b7169203331")
        #expect(inner.parentSpanID == root.context.spanID)
        #expect(inner.context.traceID == root.context.traceID)
    }

    @Test func contentIsNilWithoutTheOptInAndRedactedAndCutWithIt() {
        let off = AgentTelemetry(exporter: InMemoryTelemetryExporter())
        #expect(off.content("hello") == nil)
        let on = AgentTelemetry(
            exporter: InMemoryTelemetryExporter(),
            options: .init(includeContent: true, maximumContentCharacters: 40, secrets: SecretRedactor(secrets: ["hunter2-very-secret"]))
        )
        #expect(on.content("pw hunter2-very-secret ok") == "pw <redacted> ok")
        #expect(on.content("key sk-abcdefghijklmnopqrstuv1234") == "key <redacted>")
        #expect(on.content("Authorization: Bearer abc.def-ghijklmnop") == "Authorization: <redacted>")
        #expect(on.content("api_key=abcdef123456 rest") == "<redacted> rest")
        #expect(on.content("id AKIAABCDEFGHIJKLMNOP") == "id <redacted>")
        #expect(on.content(String(repeating: "a", count: 50)) == .string(String(repeating: "a", count: 40) + "…"))
    }
}

@Suite struct AgentMetricsTests {
    @Test func countersHistogramsAndGaugesAggregatePerAttributeSet() throws {
        let telemetry = AgentTelemetry(exporter: InMemoryTelemetryExporter(), wallClock: ManualWallClock(Date(timeIntervalSince1970: 10)))
        let metrics = telemetry.metrics
        metrics.add(.turns, 1, attributes: ["codexkit.turn.outcome": "completed"])
        metrics.add(.turns, 2, attributes: ["codexkit.turn.outcome": "completed"])
        metrics.add(.turns, 1, attributes: ["codexkit.turn.outcome": "failed"])
        metrics.add(.turns, -5)
        metrics.record(.tokenUsage, 3, attributes: ["b": "2", "a": "1"])
        metrics.record(.tokenUsage, 100, attributes: ["a": "1", "b": "2"])
        metrics.record(.tokenUsage, .nan)
        metrics.set(.eventQueueHighWater, 5)
        metrics.set(.eventQueueHighWater, 3)
        metrics.set(.rateLimitRemaining, 80)
        metrics.set(.rateLimitRemaining, 40)
        let snapshot = metrics.snapshot()
        #expect(snapshot.series.map(\.instrument.name) == [
            "codexkit.turns", "gen_ai.client.token.usage", "codexkit.event_queue.high_water", "codexkit.rate_limit.remaining",
        ])
        #expect(snapshot.points("codexkit.turns").map(\.value) == [.count(3), .count(1)])
        let histogram = snapshot.points("gen_ai.client.token.usage")
        #expect(histogram.count == 1)
        // One series for the same attributes in either order, kept in the order first recorded.
        #expect(histogram.first?.attributes.entries.map(\.key) == ["b", "a"])
        var buckets = [UInt64](repeating: 0, count: 15)
        buckets[1] = 1
        buckets[4] = 1
        #expect(histogram.first?.value == .histogram(count: 2, sum: 103, min: 3, max: 100, bucketCounts: buckets))
        #expect(snapshot.points("codexkit.event_queue.high_water").map(\.value) == [.gauge(5)])
        #expect(snapshot.points("codexkit.rate_limit.remaining").map(\.value) == [.gauge(40)])
        #expect(snapshot.startTimeUnixNano == 10_000_000_000)
    }

    @Test func aNameKeepsTheKindItWasFirstRecordedWith() {
        let metrics = AgentTelemetry(exporter: InMemoryTelemetryExporter()).metrics
        let counter = AgentMetricInstrument(name: "host.things", unit: "{thing}", description: "Things", kind: .counter)
        let histogram = AgentMetricInstrument(name: "host.things", unit: "s", description: "Things", kind: .histogram(bounds: [1]))
        metrics.add(counter, 2)
        metrics.record(histogram, 0.5)
        metrics.apply([.add(counter, 3, [:]), .record(histogram, 2, [:])])
        let snapshot = metrics.snapshot()
        #expect(snapshot.series.map(\.instrument) == [counter])
        #expect(snapshot.points("host.things").map(\.value) == [.count(5)])
    }
}
