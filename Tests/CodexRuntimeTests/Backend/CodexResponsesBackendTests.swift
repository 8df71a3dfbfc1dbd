@testable import CodexRuntime
import CodexCore
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization
import Testing

/// The built-in Responses backend against the loopback server, through the real URLSession transport.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct CodexResponsesBackendTests {
    private typealias H = BackendHarness

    private struct Place: Codable, Sendable { let city: String }

    @Test func configurationDefaultsAndClamping() {
        let defaults = CodexResponsesBackendConfiguration()
        #expect(defaults.model == .default)
        #expect(defaults.endpoint == .chatGPT)
        #expect(!defaults.enableImageGeneration && !defaults.enableReasoningSummaries)
        #expect(defaults.maximumModelPasses == 32)
        #expect(defaults.maximumResponseBytes == 256 * 1024 * 1024)
        #expect(defaults.maximumResponseItems == 2048)
        #expect(defaults.maximumBufferedEvents == 64)
        #expect(defaults.streamIdleTimeout == 300)
        #expect(defaults.retryPolicy == .default)
        #expect(defaults.instructions == nil)
        #expect(CodexResponsesBackendConfiguration(enableImageGeneration: true).enableImageGeneration)
        #expect(CodexResponsesBackendConfiguration(model: .gpt6Astra).model.rawValue == "gpt-6-astra")
        #expect(CodexResponsesBackendConfiguration(maximumBufferedEvents: 0).effectiveBufferedEvents == 1)
        #expect(CodexResponsesBackendConfiguration(maximumBufferedEvents: 10_000).effectiveBufferedEvents == 4096)
        #expect(CodexResponsesBackendConfiguration(maximumModelPasses: -3).budgets.passes == 0)
        #expect(CodexResponsesBackendConfiguration(streamIdleTimeout: 2.5).clientConfiguration.timeouts.idle == .milliseconds(2500))
        #expect(CodexResponsesBackendConfiguration(streamIdleTimeout: .nan).idleTimeout == .seconds(300))
    }

    @Test func aPlainTextTurnStreamsDeltasTheMessageUsageAndTheSummary() async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        script.messageAdded("msg_1", index: 0, phase: "final_answer")
        script.delta("msg_1", "Hel")
        script.delta("msg_1", "lo!")
        script.messageDone("msg_1", "Hello!", index: 0, phase: "final_answer")
        script.completed("resp_1")
        let server = try LoopbackHTTPServer(replies: [.sse(script.events)])
        defer { server.shutdown() }
        let backend = try H.backend(server, configuration: .init(instructions: "Base personality."))

        let image = AgentImageAttachment.png(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3]))
        var turn = H.turn(instructions: "")
        turn.request = try Request(text: "Hello", images: [image], context: Place(city: "Paris"), contextSchemaName: "Place")
        turn.reasoningEffort = .ultra
        turn.responseContract = "Reply in one sentence."
        turn.responseFormat = AgentStructuredOutputFormat(
            name: "answer", rawSchema: ["type": "object", "properties": ["a": ["type": "string"]], "required": ["a"], "additionalProperties": false]
        )
        turn.history = [
            .message(AgentMessage(threadID: H.threadID, role: .user, text: "Earlier question")),
            .message(AgentMessage(threadID: H.threadID, role: .assistant, text: "Earlier answer", phase: .finalAnswer)),
            .reasoning(AgentReasoningItem(itemID: "rs_0", summary: ["Plan"], encryptedContent: "enc-0")),
            .toolCall(ToolInvocation(id: "call_0", toolName: "lookup", arguments: #"{"q":1}"#)),
            .toolResult(ToolResultEnvelope(invocationID: "call_0", toolName: "lookup", status: .success, content: [.text("first"), .text("second")])),
            .systemEvent(AgentSystemEvent(type: .turnCompleted, turnID: "turn-0")),
            .message(AgentMessage(threadID: H.threadID, role: .developer, text: "Stored note")),
        ]

        let stream = try await backend.startTurn(turn)
        let (events, error) = await H.drain(stream)
        #expect(error == nil)
        #expect(events.map(H.describe) == [
            "turnStarted(turn-1)",
            "progress(messageStarted msg_1 final_answer)",
            "delta(Hel)",
            "delta(lo!)",
            "message(assistant,final_answer,Hello!,images:0)",
            "progress(messageCompleted msg_1 final_answer)",
            "usage(10/5/15)",
            "turnCompleted(assistant,final_answer,Hello!,images:0,10/5/15,resp_1)",
        ])
        guard case .turnCompleted(let summary)? = events.last else { Issue.record("no summary"); return }
        #expect(summary.threadID == H.threadID && summary.turnID == H.turnID)
        #expect(summary.usage == ResponsesScript.usage())
        #expect(summary.finalMessage?.threadID == H.threadID)

        let recorded = try #require(server.requests.first)
        #expect(server.requests.count == 1)
        #expect(recorded.path == "/api/codex/responses")
        #expect(recorded.header("session_id") == "thread-1")
        #expect(recorded.header("x-client-request-id") == "turn-1")
        #expect(recorded.header("authorization") == "Bearer sk-test")
        #expect(String(decoding: recorded.body, as: UTF8.self).contains(#""store":false"#))
        let body = try H.body(server, 0)
        #expect(body["model"] == "gpt-6-astra")
        #expect(body["instructions"] == "Base personality.")
        #expect(body["store"] == false)
        #expect(body["stream"] == true)
        #expect(body["include"] == ["reasoning.encrypted_content"])
        #expect(body["reasoning"] == ["effort": "max"])
        #expect(body["prompt_cache_key"] == "thread-1")
        #expect(body["tools"] == [])
        #expect(body["parallel_tool_calls"] == false)
        #expect(body["text"] == [
            "format": [
                "type": "json_schema", "name": "answer", "strict": true,
                "schema": ["type": "object", "properties": ["a": ["type": "string"]], "required": ["a"], "additionalProperties": false],
            ],
        ])
        let expectedInput = try JSONValue(parsing: """
            [
              {"type":"message","role":"user","content":[{"type":"input_text","text":"Earlier question"}]},
              {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Earlier answer"}],"phase":"final_answer"},
              {"type":"reasoning","summary":[{"type":"summary_text","text":"Plan"}],"encrypted_content":"enc-0"},
              {"type":"function_call","call_id":"call_0","name":"lookup","arguments":"{\\"q\\":1}"},
              {"type":"function_call_output","call_id":"call_0","output":"first\\n\\nsecond"},
              {"type":"message","role":"developer","content":[{"type":"input_text","text":"Stored note"}]},
              {"type":"message","role":"developer","content":[{"type":"input_text","text":"Context type: Place\\n{\\"city\\":\\"Paris\\"}"}]},
              {"type":"message","role":"user","content":[{"type":"input_text","text":"Hello"},
                {"type":"input_image","image_url":"data:image/png;base64,\(image.data.base64EncodedString())"}]},
              {"type":"message","role":"developer","content":[{"type":"input_text","text":"Reply in one sentence."}]}
            ]
            """)
        #expect(body["input"] == expectedInput)
    }

    @Test func aTwoPassToolRoundTripReplaysCallsAndOutputsInCallOrder() async throws {
        var first = ResponsesScript()
        first.created("resp_1")
        first.reasoningDone("rs_1", summary: "Thinking", encrypted: "enc-1", index: 0)
        first.functionCallDone("fc_1", callID: "call_a", name: "lookup", arguments: #"{"id":1}"#, index: 1)
        first.functionCallDone("fc_2", callID: "call_b", name: "weather", arguments: #"{"city":"Oslo"}"#, index: 2)
        first.completed("resp_1")
        var second = ResponsesScript()
        second.created("resp_2")
        second.messageDone("msg_2", "Done.", index: 0)
        second.completed("resp_2", input: 20, output: 7)
        let server = try LoopbackHTTPServer(replies: [.sse(first.events), .sse(second.events)])
        defer { server.shutdown() }
        let backend = try H.backend(server)
        let stream = try await backend.startTurn(H.turn("Look up", tools: [H.tool("lookup", parallel: true), H.tool("weather")]))

        var events: [AgentBackendEvent] = []
        var refusals: [String] = []
        func refused(_ envelope: ToolResultEnvelope) async {
            do {
                try await stream.submitToolResult(envelope)
                refusals.append("accepted")
            } catch let error as AgentRuntimeError {
                refusals.append("\(error.code.rawValue): \(error.message)")
            } catch {
                refusals.append("unexpected \(error)")
            }
        }
        for try await event in stream.events {
            events.append(event)
            guard case .toolCallsRequested(let calls) = event, calls.count == 2 else { continue }
            try await stream.submitToolResult(.success(calls[1], text: "B result"))
            await refused(ToolResultEnvelope(invocationID: "call_zzz", toolName: "lookup", status: .success, content: [.text("x")]))
            await refused(ToolResultEnvelope(invocationID: "call_b", toolName: "weather", status: .success, content: [.text("again")]))
            await refused(ToolResultEnvelope(invocationID: "call_a", toolName: "weather", status: .success, content: [.text("wrong name")]))
            try await stream.submitToolResult(.failure(calls[0], message: "A result"))
            await refused(.success(calls[0], text: "duplicate"))
        }
        await refused(ToolResultEnvelope(invocationID: "call_c", toolName: "lookup", status: .success, content: [.text("late")]))

        #expect(refusals == [
            "invalid_tool_result: the result answers no announced tool call",
            "invalid_tool_result: a result for this tool call was already accepted",
            "invalid_tool_result: the result's tool name does not match the announced call",
            "invalid_tool_result: a result for this tool call was already accepted",
            "invalid_tool_result: no tool calls are awaiting results",
        ])
        #expect(events.map(H.describe) == [
            "turnStarted(turn-1)",
            "reasoning(rs_1,[\"Thinking\"],enc-1)",
            "usage(10/5/15)",
            #"toolCalls(call_a lookup {"id":1}, call_b weather {"city":"Oslo"})"#,
            "message(assistant,nil,Done.,images:0)",
            "progress(messageCompleted msg_2 nil)",
            "usage(20/7/27)",
            "turnCompleted(assistant,nil,Done.,images:0,30/12/42,resp_2)",
        ])
        if case .toolCallsRequested(let calls) = events[3] {
            #expect(calls.allSatisfy { $0.threadID == H.threadID && $0.turnID == H.turnID })
        }

        #expect(server.requests.count == 2)
        #expect(try H.body(server, 0)["parallel_tool_calls"] == true)
        #expect(try H.body(server, 0)["tools"]?[0]?["name"] == "lookup")
        #expect(server.requests[1].header("x-client-request-id") == "turn-1")
        let secondInput = try JSONValue(parsing: #"""
            [
              {"type":"message","role":"user","content":[{"type":"input_text","text":"Look up"}]},
              {"type":"reasoning","summary":[{"type":"summary_text","text":"Thinking"}],"encrypted_content":"enc-1"},
              {"type":"function_call","call_id":"call_a","name":"lookup","arguments":"{\"id\":1}"},
              {"type":"function_call","call_id":"call_b","name":"weather","arguments":"{\"city\":\"Oslo\"}"},
              {"type":"function_call_output","call_id":"call_a","output":"A result"},
              {"type":"function_call_output","call_id":"call_b","output":"B result"}
            ]
            """#)
        #expect(try H.body(server, 1)["input"] == secondInput)
    }

    @Test func aSingleToolCallIsAnnouncedAsToolCallRequested() async throws {
        var first = ResponsesScript()
        first.created("resp_1")
        first.functionCallDone("fc_1", callID: "call_a", name: "lookup", arguments: "{}", index: 0)
        first.completed("resp_1")
        var second = ResponsesScript()
        second.created("resp_2")
        second.messageDone("msg_2", "Ok.", index: 0, phase: "final_answer")
        second.completed("resp_2")
        let server = try LoopbackHTTPServer(replies: [.sse(first.events), .sse(second.events)])
        defer { server.shutdown() }
        let stream = try await H.backend(server).startTurn(H.turn(tools: [H.tool("lookup")]))
        var described: [String] = []
        for try await event in stream.events {
            described.append(H.describe(event))
            if case .toolCallRequested(let call) = event { try await stream.submitToolResult(.success(call, text: "42")) }
        }
        #expect(described.contains("toolCall(call_a lookup {})"))
        #expect(described.last == "turnCompleted(assistant,final_answer,Ok.,images:0,20/10/30,resp_2)")
        #expect(try H.body(server, 0)["parallel_tool_calls"] == false)
    }

    @Test func aStreamWithoutResponseCompletedFailsAfterOutputWithoutRetry() async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        script.delta("msg_1", "partial")
        let server = try LoopbackHTTPServer(replies: [.sse(script.events), .sse(script.events), .sse(script.events)])
        defer { server.shutdown() }
        let stream = try await H.backend(server).startTurn(H.turn())
        try await stream.waitUntilReady()
        let (events, error) = await H.drain(stream)
        #expect(events.map(H.describe) == ["turnStarted(turn-1)", "delta(partial)"])
        let failure = try #require(error as? AgentRuntimeError)
        #expect(failure.code == .responsesStreamDisconnected)
        #expect(failure.retry?.safety == .outputAlreadyEmitted)
        #expect(server.requests.count == 1)
    }

    @Test func generatedImagesBecomeAssistantMessagesOnceEvenWhileGenerating() async throws {
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
        var script = ResponsesScript()
        script.created("resp_1")
        script.imageItem("response.output_item.added", id: "ig_1", status: "in_progress", result: nil, index: 0)
        script.add("response.image_generation_call.generating", #""item_id":"ig_1","output_index":0"#)
        script.imageItem("response.output_item.added", id: "ig_2", status: "generating", result: png.base64EncodedString(), index: 1)
        script.imageItem("response.output_item.done", id: "ig_2", status: "completed", result: png.base64EncodedString(), index: 1)
        script.imageItem("response.output_item.done", id: "ig_1", status: "generating", result: "%%not base64%%", index: 0)
        script.messageAdded("msg_1", index: 2)
        script.messageDone("msg_1", "", index: 2)
        script.completed("resp_1")
        let server = try LoopbackHTTPServer(replies: [.sse(script.events)])
        defer { server.shutdown() }
        let log = InMemoryAgentLogSink()
        let backend = try H.backend(server, configuration: .init(enableImageGeneration: true), logSink: log)
        let (events, error) = await H.drain(try await backend.startTurn(H.turn("Draw a red square")))
        #expect(error == nil)
        #expect(events.map(H.describe) == [
            "turnStarted(turn-1)",
            "message(assistant,nil,,images:1)",
            "progress(messageStarted msg_1 nil)",
            "progress(messageCompleted msg_1 nil)",
            "usage(10/5/15)",
            "turnCompleted(assistant,nil,,images:1,10/5/15,resp_1)",
        ])
        guard case .assistantMessageCompleted(let message) = events[1], let image = message.images.first else {
            Issue.record("no image message")
            return
        }
        #expect(image.data == png)
        #expect(image.mimeType == "image/png")
        #expect(image.generationMetadata == .init(revisedPrompt: "A red square", size: "1024x1024", quality: "high", outputFormat: "png", background: "opaque"))
        #expect(log.events(named: "backend.image_generation.skipped").map { $0.metadata["item_id"] } == ["ig_1"])
        #expect(try H.body(server, 0)["tools"] == [["type": "image_generation", "output_format": "png"]])
    }

    @Test func waitUntilReadyThrowsForARejectedFirstRequestAndReturnsForAnAcceptedOne() async throws {
        let rejecting = try LoopbackHTTPServer(replies: [
            .json(#"{"error":{"code":"bad_field","message":"nope","type":"invalid_request_error"}}"#, status: 400),
        ])
        defer { rejecting.shutdown() }
        let rejected = try await H.backend(rejecting).startTurn(H.turn())
        let readiness = await #expect(throws: AgentRuntimeError.self) { try await rejected.waitUntilReady() }
        #expect(readiness?.code == .invalidRequest)
        #expect(readiness?.http?.statusCode == 400)
        let (events, error) = await H.drain(rejected)
        #expect(events.isEmpty)
        #expect((error as? AgentRuntimeError)?.code == .invalidRequest)
        #expect(rejecting.requests.count == 1)

        var script = ResponsesScript()
        script.created("resp_1")
        script.completed("resp_1")
        let accepting = try LoopbackHTTPServer(replies: [.sse(script.events)])
        defer { accepting.shutdown() }
        let accepted = try await H.backend(accepting).startTurn(H.turn())
        try await accepted.waitUntilReady()
        try await accepted.waitUntilReady()
        let (acceptedEvents, acceptedError) = await H.drain(accepted)
        #expect(acceptedError == nil)
        #expect(acceptedEvents.map(H.describe) == ["turnStarted(turn-1)", "usage(10/5/15)", "turnCompleted(nil,10/5/15,resp_1)"])
    }
}
