@testable import CodexRuntime
import CodexCore
import CodexKitTesting
import CodexLoopback
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Content opt-in, trace context, and collectors that are down, slow or refusing.
@Suite struct OTLPExportFaultTests {
    @Test func contentIsExportedOnlyWithTheOptInAndSecretsAreRedacted() async throws {
        let secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123"
        let harness = try await OTLPTestHarness.start(
            replies: [toolCallReply("resp_1", calls: [("call_a", "lookup")]), ResponsesScript.completedReply("resp_2", "Done")],
            tools: [echoTool("lookup")], options: .init(includeContent: true)
        )
        defer { harness.stop() }
        _ = try await harness.turn("Use key \(secret) and Bearer abcdefghijklmnopqrstuvwxyz please")
        let received = try await harness.exported()
        let turn = try #require(received.spans.named("invoke_agent"))
        #expect(turn.attributes["gen_ai.input.messages"] == "Use key <redacted> and <redacted> please")
        #expect(turn.attributes["gen_ai.output.messages"] == "Done")
        let lookup = try #require(received.spans.named("execute_tool lookup"))
        #expect(lookup.attributes["gen_ai.tool.call.arguments"] == #"{"q":"x"}"#)
        #expect(lookup.attributes["gen_ai.tool.call.result"] == "result call_a")
    }

    @Test func aTurnJoinsTheHostsTraceAndSendsTraceparentOnlyWhenAllowed() async throws {
        let host = try #require(AgentSpanContext(traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"))
        let receiver = try await OTLPTestReceiver.start()
        defer { receiver.stopNow() }
        for propagate in [false, true] {
            let harness = try await OTLPTestHarness.start(
                replies: [ResponsesScript.completedReply("resp_1", "Hi")], options: .init(propagateTraceContext: propagate), receiver: receiver
            )
            defer { harness.server.shutdown() }
            try await receiver.reset()
            _ = try await AgentTelemetry.withParent(host) { try await harness.turn() }
            let received = try await harness.exported()
            let turn = try #require(received.spans.named("invoke_agent"))
            #expect(turn.traceID == "0af7651916cd43dd8448eb211c80319c")
            #expect(turn.parentSpanID == "b7ad6b7169203331")
            let chat = try #require(received.spans.named("chat gpt-6-astra"))
            let sent = harness.server.requests.first { $0.path.hasSuffix("/responses") }?.header("traceparent")
            #expect(sent == (propagate ? "00-0af7651916cd43dd8448eb211c80319c-\(chat.spanID)-01" : nil))
        }
    }

    @Test func anUnsampledHostParentRecordsNothing() async throws {
        let host = try #require(AgentSpanContext(traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"))
        let harness = try await OTLPTestHarness.start(replies: [ResponsesScript.completedReply("resp_1", "Hi")])
        defer { harness.stop() }
        let result = try await AgentTelemetry.withParent(host) { try await harness.turn() }
        #expect(result.error == nil)
        let received = try await harness.exported()
        #expect(received.spans == [])
        #expect(received.exports.traces == 0)
    }

    @Test func aRefusingCollectorIsRetriedAsOTLPSays() async throws {
        let harness = try await OTLPTestHarness.start(replies: [ResponsesScript.completedReply("resp_1", "Hi")], configure: { $0.metricsURL = nil })
        defer { harness.stop() }
        try await harness.receiver.failNext(2, status: 503, retryAfter: "0")
        _ = try await harness.turn()
        let received = try await harness.exported()
        #expect(received.rejected == 2)
        #expect(received.exports.traces == 1)
        #expect(received.spans.count == 3)
        let statistics = harness.exporter.statistics
        #expect(statistics.retries == 2)
        #expect(statistics.exportedSpans == 3)
        #expect(statistics.failedSpans == 0)
    }

    @Test func shutdownTriesEachRequestOnceAndPerSignalHeadersStayWithTheirSignal() async throws {
        let harness = try await OTLPTestHarness.start(replies: [ResponsesScript.completedReply("resp_1", "Hi")], configure: {
            $0.tracesHeaders = ["x-traces-key": "t1"]
            $0.metricsHeaders = ["x-metrics-key": "m1"]
        })
        defer { harness.stop() }
        _ = try await harness.turn()
        try await harness.receiver.failNext(1, status: 503, retryAfter: "0")
        await harness.telemetry.shutdown()
        let received = try await harness.receiver.received()
        // The spans' one try was refused; the metrics went out, with their own header only.
        #expect(received.rejected == 1)
        #expect(received.spans == [])
        #expect(received.exports.metrics == 1)
        #expect(received.headers.map { [$0["x-traces-key"], $0["x-metrics-key"], $0["x-collector-key"]] } == [[nil, "m1", "k1"]])
        let statistics = harness.exporter.statistics
        #expect(statistics.retries == 0)
        #expect(statistics.failedSpans == 3)
        // After shutdown a span is dropped and counted.
        harness.telemetry.startRootSpan("late").end()
        #expect(harness.exporter.statistics.droppedSpans == 1)
    }

    @Test func aCollectorThatRefusesForGoodDropsTheBatchAndCountsIt() async throws {
        let harness = try await OTLPTestHarness.start(replies: [ResponsesScript.completedReply("resp_1", "Hi")], configure: { $0.metricsURL = nil })
        defer { harness.stop() }
        try await harness.receiver.failNext(1, status: 400)
        _ = try await harness.turn()
        let received = try await harness.exported()
        #expect(received.rejected == 1)
        #expect(received.spans == [])
        #expect(harness.exporter.statistics.failedSpans == 3)
        #expect(harness.exporter.statistics.retries == 0)
    }

    @Test func aCollectorThatIsDownNeverFailsATurn() async throws {
        // Port 9 (discard) on loopback: nothing listens, so the connection is refused at once. (A port a
        // stopped receiver had freed could be taken by another test's server meanwhile, which then
        // answered with a status that is not retried.)
        let endpoint = try #require(URL(string: "http://127.0.0.1:9"))
        let receiver = try await OTLPTestReceiver.start()
        let harness = try await OTLPTestHarness.start(
            replies: [ResponsesScript.completedReply("resp_1", "Hi")], receiver: receiver, endpoint: endpoint
        )
        defer { harness.stop() }
        let result = try await harness.turn()
        #expect(result.error == nil)
        #expect(result.events.contains { if case .turnCompleted = $0 { return true } else { return false } })
        await harness.telemetry.flush()
        let statistics = harness.exporter.statistics
        #expect(statistics.failedSpans == 3)
        // Three tries each for the spans and the metrics.
        #expect(statistics.retries == 4)
        #expect(statistics.failedMetricExports == 1)
        #expect(statistics.queuedSpans == 0)
    }

    @Test func aSlowCollectorNeverSlowsATurnAndAFullQueueDropsTheOldest() async throws {
        let harness = try await OTLPTestHarness.start(
            replies: [
                ResponsesScript.completedReply("resp_1", "One"), ResponsesScript.completedReply("resp_2", "Two"),
                ResponsesScript.completedReply("resp_3", "Three"),
            ],
            configure: { $0.maximumQueueSize = 4; $0.maximumBatchSize = 512; $0.metricsURL = nil }
        )
        defer { harness.stop() }
        try await harness.receiver.hold(true)
        // A first export that hangs on the collector…
        _ = try await harness.turn("one")
        let hanging = Task { await harness.telemetry.flush() }
        try await eventuallyHeld(harness.receiver)
        // … does not hold up the next turn; its three spans (the turn, its request, its commit) wait in
        // the queue behind the hung request.
        let result = try await harness.turn("two")
        #expect(result.error == nil)
        #expect(harness.exporter.statistics.queuedSpans == 3)
        #expect(harness.exporter.statistics.droppedSpans == 0)
        // A third turn overflows the queue of 4: the two oldest spans are dropped and counted.
        _ = try await harness.turn("three")
        #expect(harness.exporter.statistics.queuedSpans == 4)
        #expect(harness.exporter.statistics.droppedSpans == 2)
        #expect(harness.telemetry.metrics.snapshot().points("codexkit.telemetry.spans.dropped").map(\.value) == [.count(2)])
        try await harness.receiver.hold(false)
        await hanging.value
        let received = try await harness.exported()
        #expect(received.spans.count == 3 + 4)
        #expect(harness.exporter.statistics.exportedSpans == 7)
    }

    /// Waits until the receiver holds one export (the receiver answers the question; no clock).
    private func eventuallyHeld(_ receiver: OTLPTestReceiver) async throws {
        while try await receiver.received().held < 1 { await Task.yield() }
    }
}
