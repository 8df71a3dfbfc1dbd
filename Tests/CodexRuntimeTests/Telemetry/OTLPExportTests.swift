@testable import CodexRuntime
import CodexCore
import CodexKitTesting
import CodexLoopback
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Turns exported to a real OTLP receiver in each encoding: the Python `opentelemetry-proto` package
/// parses every request strictly, and the tests assert the span trees, attributes and metrics it received.
@Suite struct OTLPExportTests {
    @Test(arguments: OTLPEncoding.allCases) func aStreamedTurnIsATurnSpanOverItsModelRequest(_ encoding: OTLPEncoding) async throws {
        let harness = try await OTLPTestHarness.start(encoding: encoding, replies: [ResponsesScript.completedReply("resp_1", "Hi there")])
        defer { harness.stop() }
        let result = try await harness.turn()
        #expect(result.error == nil)
        let received = try await harness.exported()
        #expect(received.errors == [])
        // One write under the turn, its commit (the usage ledger's bookkeeping write has no span).
        #expect(received.spans.tree == [
            "chat gpt-6-astra <- invoke_agent",
            "codexkit.storage.commit <- invoke_agent",
            "invoke_agent <- -",
        ])
        let turn = try #require(received.spans.named("invoke_agent"))
        let chat = try #require(received.spans.named("chat gpt-6-astra"))
        #expect(turn.kind == 1)
        #expect(chat.kind == 3)
        #expect(chat.traceID == turn.traceID)
        #expect(turn.attributes["gen_ai.operation.name"] == "invoke_agent")
        #expect(turn.attributes["gen_ai.provider.name"] == "openai")
        #expect(turn.attributes["gen_ai.request.model"] == "gpt-6-astra")
        #expect(turn.attributes["codexkit.turn.outcome"] == "completed")
        #expect(turn.attributes["gen_ai.usage.input_tokens"] == 10)
        #expect(turn.attributes["gen_ai.usage.output_tokens"] == 5)
        #expect(turn.status.code == 0)
        #expect(chat.attributes["gen_ai.operation.name"] == "chat")
        #expect(chat.attributes["gen_ai.request.model"] == "gpt-6-astra")
        #expect(chat.attributes["gen_ai.response.id"] == "resp_1")
        #expect(chat.attributes["gen_ai.usage.input_tokens"] == 10)
        #expect(chat.attributes["gen_ai.usage.output_tokens"] == 5)
        #expect(chat.attributes["gen_ai.usage.cache_read.input_tokens"] == 2)
        #expect(chat.attributes["gen_ai.usage.reasoning.output_tokens"] == 1)
        #expect(chat.attributes["http.response.status_code"] == 200)
        #expect(chat.attributes["codexkit.request.attempt"] == 1)
        #expect(chat.attributes["server.address"] == "127.0.0.1")
        #expect(chat.attributes["codexkit.response.time_to_first_token"] != nil)
        #expect(chat.status.code == 1)
        // Content stays out without the opt-in.
        for span in received.spans {
            #expect(span.attributes.keys.filter { $0.hasPrefix("gen_ai.input") || $0.hasPrefix("gen_ai.output") || $0.hasPrefix("gen_ai.tool.call.a") }.isEmpty)
        }
        #expect(turn.resource["service.name"] == "otlp-tests")
        #expect(turn.resource["telemetry.sdk.name"] == "codexkit")
        #expect(turn.scope.name == "codexkit")
        #expect(received.headers.allSatisfy { $0["x-collector-key"] == "k1" && $0["content-type"] == encoding.contentType })
        // The turn's request carried no traceparent: propagation is off by default.
        #expect(harness.server.requests.allSatisfy { $0.header("traceparent") == nil })
        #expect(harness.exporter.statistics.exportedSpans == 3)
    }

    @Test(arguments: OTLPEncoding.allCases) func aToolBatchIsOneSpanPerCallBetweenTwoModelRequests(_ encoding: OTLPEncoding) async throws {
        let harness = try await OTLPTestHarness.start(
            encoding: encoding, replies: [toolCallReply("resp_1", calls: [("call_a", "lookup"), ("call_b", "search")]), ResponsesScript.completedReply("resp_2", "Done")],
            tools: [echoTool("lookup"), echoTool("search")]
        )
        defer { harness.stop() }
        let result = try await harness.turn()
        #expect(result.error == nil)
        let received = try await harness.exported()
        #expect(received.errors == [])
        let spans = received.spans.filter { $0.name != "codexkit.storage.commit" }
        #expect(spans.tree == [
            "chat gpt-6-astra <- invoke_agent",
            "chat gpt-6-astra <- invoke_agent",
            "execute_tool lookup <- invoke_agent",
            "execute_tool search <- invoke_agent",
            "invoke_agent <- -",
        ])
        let lookup = try #require(received.spans.named("execute_tool lookup"))
        #expect(lookup.attributes["gen_ai.operation.name"] == "execute_tool")
        #expect(lookup.attributes["gen_ai.tool.name"] == "lookup")
        #expect(lookup.attributes["gen_ai.tool.call.id"] == "call_a")
        #expect(lookup.attributes["codexkit.tool.outcome"] == "success")
        #expect(lookup.attributes["gen_ai.tool.call.arguments"] == nil)
        #expect(lookup.attributes["gen_ai.tool.call.result"] == nil)
        let chats = received.spans.filter { $0.name == "chat gpt-6-astra" }.sorted { $0.startTimeUnixNano < $1.startTimeUnixNano }
        #expect(chats.map { $0.attributes["gen_ai.response.id"] } == ["resp_1", "resp_2"])
        // The calls ran after the first request ended and before the second began.
        #expect(lookup.startTimeUnixNano >= chats[0].endTimeUnixNano)
        #expect(lookup.endTimeUnixNano <= chats[1].startTimeUnixNano)
        let toolDurations = received.metrics.filter { $0.name == "codexkit.tool.duration" }.flatMap(\.points)
        #expect(toolDurations.map(\.count) == [1, 1])
        let toolNames = toolDurations.compactMap { point -> String? in
            if case .string(let name)? = point.attributes["gen_ai.tool.name"] { return name }
            return nil
        }
        #expect(toolNames.sorted() == ["lookup", "search"])
    }

    @Test(arguments: OTLPEncoding.allCases) func aRetriedRequestIsTwoAttemptsUnderOneTurn(_ encoding: OTLPEncoding) async throws {
        let harness = try await OTLPTestHarness.start(encoding: encoding, replies: [
            .json(#"{"error":{"message":"overloaded","type":"server_error","code":"server_overloaded"}}"#, status: 503, headers: [.init(name: "x-request-id", value: "req_first")]),
            ResponsesScript.completedReply("resp_2", "Hi"),
        ])
        defer { harness.stop() }
        let result = try await harness.turn()
        #expect(result.error == nil)
        let received = try await harness.exported()
        let chats = received.spans.filter { $0.name == "chat gpt-6-astra" }.sorted { $0.startTimeUnixNano < $1.startTimeUnixNano }
        try #require(chats.count == 2)
        #expect(chats.map { $0.attributes["codexkit.request.attempt"] } == [1, 2])
        #expect(chats[0].status.code == 2)
        #expect(chats[0].attributes["http.response.status_code"] == 503)
        #expect(chats[0].attributes["codexkit.provider.request_id"] == "req_first")
        #expect(chats[0].attributes["codexkit.request.will_retry"] == true)
        #expect(chats[0].attributes["error.type"] != nil)
        #expect(chats[1].status.code == 1)
        #expect(chats[1].attributes["codexkit.request.will_retry"] == nil)
        let turn = try #require(received.spans.named("invoke_agent"))
        #expect(chats.allSatisfy { $0.parentSpanID == turn.spanID })
        let retries = received.metrics.filter { $0.name == "codexkit.request.retries" }.flatMap(\.points)
        #expect(retries.map(\.value) == [.int(1)])
    }

    @Test(arguments: OTLPEncoding.allCases) func aFailedTurnEndsWithAnErrorStatusAndCode(_ encoding: OTLPEncoding) async throws {
        let harness = try await OTLPTestHarness.start(encoding: encoding, replies: [
            .json(#"{"error":{"message":"no","type":"invalid_request_error","code":"invalid_value"}}"#, status: 400),
        ])
        defer { harness.stop() }
        let result = try await harness.turn()
        let failure = try #require(result.error as? AgentRuntimeError)
        let received = try await harness.exported()
        let turn = try #require(received.spans.named("invoke_agent"))
        #expect(turn.status.code == 2)
        #expect(turn.status.message == failure.code.rawValue)
        #expect(turn.attributes["error.type"] == .string(failure.code.rawValue))
        #expect(turn.attributes["codexkit.turn.outcome"] == "failed")
        let chat = try #require(received.spans.named("chat gpt-6-astra"))
        #expect(chat.status.code == 2)
        #expect(chat.attributes["codexkit.request.will_retry"] == false)
        let turns = received.metrics.filter { $0.name == "codexkit.turns" }.flatMap(\.points)
        #expect(turns.map(\.value) == [.int(1)])
        #expect(turns.map { $0.attributes["codexkit.turn.outcome"] } == ["failed"])
    }

    @Test(arguments: OTLPEncoding.allCases) func rateLimitWindowsAndTheEventQueuesHighWaterAreGauges(_ encoding: OTLPEncoding) async throws {
        var reply = ResponsesScript()
        reply.created("resp_1")
        reply.messageDone("msg_1", "Hi.", index: 0)
        reply.completed("resp_1")
        let limits = [
            HTTPHeaderField(name: "x-codex-primary-used-percent", value: "40"), HTTPHeaderField(name: "x-codex-secondary-used-percent", value: "12.5"),
        ]
        let harness = try await OTLPTestHarness.start(encoding: encoding, replies: [.sse(reply.events, headers: limits)])
        defer { harness.stop() }
        let thread = try await harness.runtime.createThread(model: .gpt6Astra)
        let stream = try await harness.runtime.stream(Request(text: "Hello"), in: thread.id)
        // Nothing is read until the turn has ended (its span is queued), so every event it sent waits in
        // the stream's queue: the high-water mark is exactly their number.
        while harness.exporter.statistics.queuedSpans < 3 { await Task.yield() }
        let result = await collect(stream)
        #expect(result.error == nil)
        let received = try await harness.exported()
        let remaining = try #require(received.metrics.first { $0.name == "codexkit.rate_limit.remaining" })
        #expect(remaining.kind == .gauge)
        #expect(remaining.unit == "%")
        let byWindow = Dictionary(remaining.points.compactMap { point -> (String, OTLPValue?)? in
            guard point.attributes["codexkit.rate_limit.family"] == "codex", case .string(let window)? = point.attributes["codexkit.rate_limit.window"] else { return nil }
            return (window, point.value)
        }, uniquingKeysWith: { first, _ in first })
        #expect(byWindow == ["primary": .double(60), "secondary": .double(87.5)])
        let highWater = try #require(received.metrics.first { $0.name == "codexkit.event_queue.high_water" })
        #expect(highWater.kind == .gauge)
        // Every event before the commit: the events after it (the committed message, turnCompleted) come later.
        let beforeCommit = result.events.count - 2
        #expect(highWater.points.map(\.value) == [.double(Double(beforeCommit))])
    }

    @Test(arguments: OTLPEncoding.allCases) func tokenMetricsCountEveryKindByModel(_ encoding: OTLPEncoding) async throws {
        let harness = try await OTLPTestHarness.start(encoding: encoding, replies: [
            ResponsesScript.completedReply("resp_1", "One"), ResponsesScript.completedReply("resp_2", "Two"),
        ])
        defer { harness.stop() }
        _ = try await harness.turn()
        _ = try await harness.turn()
        let received = try await harness.exported()
        let tokens = try #require(received.metrics.first { $0.name == "codexkit.tokens" })
        #expect(tokens.kind == .sum)
        #expect(tokens.monotonic == true)
        #expect(tokens.temporality == 2)
        var byKind: [String: OTLPValue] = [:]
        for point in tokens.points {
            #expect(point.attributes["gen_ai.request.model"] == "gpt-6-astra")
            if case .string(let kind)? = point.attributes["codexkit.token.type"] { byKind[kind] = point.value }
        }
        #expect(byKind == ["input": .int(20), "cached_input": .int(4), "output": .int(10), "reasoning_output": .int(2)])
        let usage = try #require(received.metrics.first { $0.name == "gen_ai.client.token.usage" })
        #expect(usage.kind == .histogram)
        let input = try #require(usage.points.first { $0.attributes["gen_ai.token.type"] == "input" })
        #expect(input.count == 2)
        #expect(input.sum == 20)
        #expect(input.bucketCounts == [0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        let turns = received.metrics.filter { $0.name == "codexkit.turns" }.flatMap(\.points)
        #expect(turns.map(\.value) == [.int(2)])
        let duration = try #require(received.metrics.first { $0.name == "gen_ai.client.operation.duration" })
        #expect(duration.unit == "s")
        #expect(duration.points.map(\.count) == [2])
    }

    /// JSON has no number for NaN or the infinities: a JSON export writes protobuf's names for them, so the
    /// receiver reads the same values in both encodings (a JSON export once wrote 0).
    @Test(arguments: OTLPEncoding.allCases) func nonFiniteDoublesArriveAsTheyWereInEachEncoding(_ encoding: OTLPEncoding) async throws {
        let harness = try await OTLPTestHarness.start(encoding: encoding, replies: [])
        defer { harness.stop() }
        harness.exporter.export(AgentSpanData(
            name: "numbers", kind: .internal, context: .newTrace(), parentSpanID: nil, startTimeUnixNano: 1, endTimeUnixNano: 2,
            attributes: ["nan": .double(.nan), "up": .double(.infinity), "down": .double(-.infinity), "half": .double(0.5)]
        ))
        let received = try await harness.exported()
        #expect(received.errors == [])
        let span = try #require(received.spans.named("numbers"))
        #expect(span.attributes["up"] == .double(.infinity))
        #expect(span.attributes["down"] == .double(-.infinity))
        #expect(span.attributes["half"] == 0.5)
        guard case .double(let nan) = span.attributes["nan"] else {
            Issue.record("nan arrived as \(String(describing: span.attributes["nan"]))")
            return
        }
        #expect(nan.isNaN)
    }
}
