@testable import CodexRuntime
import CodexCore
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// The runtime end to end over the real transport: CodexResponsesBackend → URLSession → loopback server.
@Suite struct AgentRuntimeLoopbackTests {
    private typealias H = BackendHarness

    private func runtime(_ server: LoopbackHTTPServer, store: any RuntimeStateStore = InMemoryRuntimeStateStore(), tools: [AgentTool] = []) throws -> AgentRuntime {
        try AgentRuntime(configuration: .init(backend: try H.backend(server), stateStore: store, tools: tools))
    }

    @Test func aStreamedTurnOverTheRealTransportIsCommittedAndReplayedNextTurn() async throws {
        var first = ResponsesScript()
        first.created("resp_1")
        first.messageAdded("msg_1", index: 0, phase: "final_answer")
        first.delta("msg_1", "Hel")
        first.delta("msg_1", "lo!")
        first.messageDone("msg_1", "Hello!", index: 0, phase: "final_answer")
        first.completed("resp_1")
        var second = ResponsesScript()
        second.created("resp_2")
        second.messageDone("msg_2", "Again.", index: 0)
        second.completed("resp_2")
        let server = try LoopbackHTTPServer(replies: [.sse(first.events), .sse(second.events)])
        defer { server.shutdown() }
        let store = InMemoryRuntimeStateStore()
        let runtime = try runtime(server, store: store)
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "Hi"), in: thread.id))
        #expect(error == nil)
        #expect(events.map(name).filter { $0 != "progress" } == ["turnStarted", "delta(Hel)", "delta(lo!)", "committed(assistant: Hello!)", "turnCompleted"])
        guard case .turnCompleted(let summary) = events.last else { Issue.record("no completion"); return }
        #expect(summary.responseID == "resp_1")
        #expect(summary.usage == ResponsesScript.usage())
        #expect(try await runtime.send(Request(text: "More"), in: thread.id) == "Again.")
        let body = try H.body(server, 1)
        let input = body["input"]?.arrayValue?.compactMap { item -> String? in
            guard let role = item["role"]?.stringValue, let text = item["content"]?.arrayValue?.first?["text"]?.stringValue else { return nil }
            return "\(role): \(text)"
        }
        #expect(input == ["user: Hi", "assistant: Hello!", "user: More"])
        #expect(body["store"] == false)
        #expect(body["prompt_cache_key"]?.stringValue == thread.id.rawValue)
    }

    @Test func aToolRoundTripRunsTheHostToolAndSendsItsOutputBack() async throws {
        var first = ResponsesScript()
        first.created("resp_1")
        first.reasoningDone("rs_1", summary: "Look it up", encrypted: "enc-1", index: 0)
        first.functionCallDone("fc_1", callID: "call_1", name: "lookup", arguments: #"{"order":"A-1"}"#, index: 1)
        first.completed("resp_1")
        var second = ResponsesScript()
        second.created("resp_2")
        second.messageDone("msg_2", "It ships Tuesday.", index: 0, phase: "final_answer")
        second.completed("resp_2")
        let server = try LoopbackHTTPServer(replies: [.sse(first.events), .sse(second.events)])
        defer { server.shutdown() }
        let store = InMemoryRuntimeStateStore()
        let lookup = AgentTool(definition: H.tool("lookup")) { .success($0, text: "Order A-1: shipped, arriving Tuesday.") }
        let runtime = try runtime(server, store: store, tools: [lookup])
        let thread = try await runtime.createThread()
        #expect(try await runtime.send(Request(text: "Where is A-1?"), in: thread.id) == "It ships Tuesday.")
        let body = try H.body(server, 1)
        let types = body["input"]?.arrayValue?.compactMap { $0["type"]?.stringValue }
        #expect(types == ["message", "reasoning", "function_call", "function_call_output"])
        #expect(body["input"]?.arrayValue?.last?["output"]?.stringValue == "Order A-1: shipped, arriving Tuesday.")
        #expect(describe(try await history(store, thread.id)) == [
            "event turn_started", "user: Where is A-1?", "reasoning rs_1", "call lookup#call_1", "result lookup#call_1 success",
            "assistant: It ships Tuesday.", "event turn_completed",
        ])
    }

    @Test func cancellingTheConsumerOfARuntimeStreamClosesTheHTTPConnection() async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        script.delta("msg_1", "first")
        let server = try LoopbackHTTPServer(replies: [H.holdingReply(script.text)])
        defer { server.shutdown() }
        let store = InMemoryRuntimeStateStore()
        let runtime = try runtime(server, store: store)
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "x"), in: thread.id)
        let consumer = await consumerAfterFirstDelta(stream)
        consumer.cancel()
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard), "the loopback server saw the connection closed")
        await eventually("the thread is free again") { runtime.activeTurnID(in: thread.id) == nil }
        await runtime.flushPendingWrites()
        #expect(try await store.latestTurn(of: thread.id)?.status == .interrupted)
        #expect(server.requests.count == 1)
    }

    @Test func aOneShotStructuredReplyTravelsAsTextFormatAndIsValidatedLocally() async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        script.messageDone("msg_1", #"{\"subject\":\"Late\",\"reply\":\"Sorry.\",\"urgency\":\"high\"}"#, index: 0)
        script.completed("resp_1")
        let server = try LoopbackHTTPServer(replies: [.sse(script.events)])
        defer { server.shutdown() }
        let runtime = try runtime(server)
        let thread = try await runtime.createThread()
        let draft = try await runtime.send(Request(text: "Draft a response for the delayed package."), in: thread.id, response: ShippingReplyDraft.self)
        #expect(draft == ShippingReplyDraft(subject: "Late", reply: "Sorry.", urgency: "high"))
        let body = try H.body(server, 0)
        #expect(body["text"]?["format"]?["type"]?.stringValue == "json_schema")
        #expect(body["text"]?["format"]?["name"]?.stringValue == "shipping_reply_draft")
        let last = body["input"]?.arrayValue?.last
        #expect(last?["role"]?.stringValue == "developer")
        #expect(last?["content"]?.arrayValue?.first?["text"]?.stringValue == "Response contract\nReturn the final result serialized as `ShippingReplyDraft`.")
    }
}

@Suite struct AgentRuntimeModelDefaultTests {
    @Test func threadsWithoutAModelUseTheBackendsConfiguredModel() async throws {
        let server = try LoopbackHTTPServer(replies: [ResponsesScript.completedReply("resp_1", "ok", phase: nil)])
        defer { server.shutdown() }
        let backend = try BackendHarness.backend(server, configuration: .init(model: .gpt6Luna))
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore()))
        let thread = try await runtime.createThread()
        _ = try await runtime.send(Request(text: "x"), in: thread.id)
        #expect(try BackendHarness.body(server, 0)["model"]?.stringValue == "gpt-6-luna")
    }
}

@Suite struct AgentRuntimeInstructionTests {
    @Test func skillsAddToTheBackendsBasePersonalityWhenNoPersonaApplies() async throws {
        let server = try LoopbackHTTPServer(replies: [ResponsesScript.completedReply("resp_1", "ok", phase: nil)])
        defer { server.shutdown() }
        let backend = try BackendHarness.backend(server, configuration: .init(instructions: "Base personality."))
        let runtime = try AgentRuntime(configuration: .init(
            backend: backend, stateStore: InMemoryRuntimeStateStore(), skills: [AgentSkill(id: "triage", instructions: "Triage first.")]
        ))
        let thread = try await runtime.createThread(skillIDs: ["triage"])
        _ = try await runtime.send(Request(text: "x"), in: thread.id)
        #expect(try BackendHarness.body(server, 0)["instructions"]?.stringValue == "Base personality.\n\nTriage first.")
    }
}

@Suite struct AgentRuntimeLoopbackStructuredTests {
    /// `text` as the inside of a JSON string literal.
    private func escaped(_ text: String) -> String {
        String(JSONValue.string(text).compactString().dropFirst().dropLast())
    }

    @Test func aStreamedStructuredReplyOverTheRealTransportIsUnframedValidatedAndStored() async throws {
        let payload = #"{"subject":"Late","reply":"Sorry.","urgency":"low"}"#
        let text = "Here you go.\n<codexkit_structured_output>\n\(payload)\n</codexkit_structured_output>\nAnything else?"
        var script = ResponsesScript()
        script.created("resp_1")
        script.messageAdded("msg_1", index: 0)
        var rest = Substring(text)
        while !rest.isEmpty {
            script.delta("msg_1", escaped(String(rest.prefix(9))))
            rest = rest.dropFirst(9)
        }
        script.messageDone("msg_1", escaped(text), index: 0)
        script.completed("resp_1")
        let server = try LoopbackHTTPServer(replies: [.sse(script.events)])
        defer { server.shutdown() }
        let store = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(backend: try BackendHarness.backend(server), stateStore: store))
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "Draft"), in: thread.id, response: ShippingReplyDraft.self))
        #expect(error == nil)
        var visible = ""
        var commits: [JSONValue] = []
        for event in events {
            if case .assistantMessageDelta(_, _, let delta) = event { visible += delta }
            if case .structuredOutputCommitted(let snapshot) = event { commits.append(snapshot.value) }
        }
        #expect(visible == "Here you go.\nAnything else?")
        #expect(commits == [try JSONValue(parsing: payload)])
        let body = try BackendHarness.body(server, 0)
        #expect(body["text"]?["format"] == nil, "streamed structured replies are framed, not text.format")
        let saved = try await history(store, thread.id).compactMap { item -> AgentMessage? in
            if case .message(let message) = item, message.role == .assistant { return message }
            return nil
        }
        #expect(saved.map(\.text) == ["Here you go.\nAnything else?"])
        #expect(saved.first?.structuredOutput?.formatName == "shipping_reply_draft")
    }
}

@Suite struct AgentRuntimeBackendBudgetTests {
    @Test func aBackendBudgetFailsThePersistentTurnWithItsExecutionLimit() async throws {
        var first = ResponsesScript()
        first.created("resp_1")
        first.functionCallDone("fc_1", callID: "call_1", name: "lookup", arguments: "{}", index: 0)
        first.completed("resp_1")
        let server = try LoopbackHTTPServer(replies: [.sse(first.events)])
        defer { server.shutdown() }
        let store = InMemoryRuntimeStateStore()
        let backend = try BackendHarness.backend(server, configuration: .init(maximumModelPasses: 1))
        let lookup = AgentTool(definition: BackendHarness.tool("lookup")) { .success($0, text: "x") }
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: store, tools: [lookup]))
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "x"), in: thread.id))
        let failure = try #require(error as? AgentRuntimeError)
        #expect(failure.code == .executionLimitExceeded)
        #expect(failure.executionLimit == .modelPasses)
        #expect(events.map(name).last == "turnFailed(execution_limit_exceeded)")
        let turn = try #require(try await store.latestTurn(of: thread.id))
        #expect(turn.status == .failed)
        #expect(turn.failure?.executionLimit == .modelPasses)
        #expect(server.requests.count == 1)
    }
}
