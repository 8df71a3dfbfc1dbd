@testable import CodexRuntime
import CodexCore
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Steering a running turn of the built-in backend through the real transport and the loopback server.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct SteeringTests {
    private typealias H = BackendHarness

    @Test func aSteerDuringTheResponseIsSentWithOneMoreRequestOfTheSameTurn() async throws {
        var first = ResponsesScript()
        first.created("resp_1")
        first.messageAdded("msg_1", index: 0, phase: "final_answer")
        first.delta("msg_1", "Searching")
        var rest = ResponsesScript()
        for _ in 0..<3 { rest.add("placeholder") } // numbers the events after the first part (only the last two are sent)
        rest.messageDone("msg_1", "Searching all years.", index: 0, phase: "final_answer")
        rest.completed("resp_1")
        let held = ScriptedReply(headers: [.init(name: "Content-Type", value: "text/event-stream")],
                                 parts: [.bytes(Array(first.text.utf8)), .hold, .bytes(Array(rest.events.suffix(2).joined().utf8))], framing: .chunked)
        let server = try LoopbackHTTPServer(replies: [held, ResponsesScript.completedReply("resp_2", "Recent results only.")])
        defer { server.shutdown() }
        let store = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(backend: try H.backend(server), stateStore: store))
        let thread = try await runtime.createThread()
        var events: [AgentEvent] = []
        let stream = try await runtime.stream(Request(text: "Find results."), in: thread.id)
        for try await event in stream {
            events.append(event)
            if case .assistantMessageDelta = event {
                let turnID = try #require(runtime.activeTurnID(in: thread.id))
                try await runtime.steer("Focus on recent results.", in: thread.id, expectedTurnID: turnID)
                server.releaseHeld()
            }
        }
        #expect(server.requests.count == 2)
        let second = try H.body(server, 1)["input"]?.arrayValue ?? []
        let users = second.filter { $0["role"] == "user" }.map { $0["content"]?[0]?["text"]?.stringValue ?? "" }
        #expect(users == ["Find results.", "Focus on recent results."])
        #expect(second.last?["role"] == "user")
        #expect(events.map(name).filter { $0.hasPrefix("committed") } == [
            "committed(assistant: Searching all years.)", "committed(user: Focus on recent results.)", "committed(assistant: Recent results only.)",
        ])
        #expect(describe(try await history(store, thread.id)).filter { !$0.hasPrefix("event") } == [
            "user: Find results.", "assistant: Searching all years.", "user: Focus on recent results.", "assistant: Recent results only.",
        ])
    }

    @Test func steersAreRefusedWithoutAnActiveTurnForAStaleIDAndByABackendThatCannot() async throws {
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.hang])])
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore()))
        let thread = try await runtime.createThread()
        let idle = await #expect(throws: AgentRuntimeError.self) { try await runtime.steer("x", in: thread.id) }
        #expect(idle?.code == .turnNotActive)

        let stream = try await runtime.stream(Request(text: "go"), in: thread.id)
        var events = stream.makeAsyncIterator()
        _ = try await events.next()  // turnStarted
        let turnID = try #require(runtime.activeTurnID(in: thread.id))
        let stale = await #expect(throws: AgentRuntimeError.self) { try await runtime.steer("x", in: thread.id, expectedTurnID: AgentTurnID()) }
        #expect(stale?.code == .turnNotActive)
        let unsupported = await #expect(throws: AgentRuntimeError.self) { try await runtime.steer("x", in: thread.id, expectedTurnID: turnID) }
        #expect(unsupported?.code == .steeringUnsupported)
        try await runtime.interrupt(in: thread.id, expectedTurnID: turnID)
        await #expect(throws: CancellationError.self) { while try await events.next() != nil {} }
    }

    @Test func aStructuredTurnRefusesSteeringOnceItsPayloadHasBegun() async throws {
        var first = ResponsesScript()
        first.created("resp_1")
        first.messageAdded("msg_1", index: 0)
        first.delta("msg_1", "Here it is.")
        var second = ResponsesScript()
        for _ in 0..<3 { second.add("placeholder") } // numbers the sent event after the first part
        second.delta("msg_1", #"Still here.\n<codexkit_structured_output>\n{"#)
        let reply = ScriptedReply(
            headers: [.init(name: "Content-Type", value: "text/event-stream")],
            parts: [.bytes(Array(first.text.utf8)), .hold, .bytes(Array(second.events[3].utf8)), .hold], framing: .chunked
        )
        let server = try LoopbackHTTPServer(replies: [reply])
        defer { server.shutdown() }
        let runtime = try AgentRuntime(configuration: .init(backend: try H.backend(server), stateStore: InMemoryRuntimeStateStore()))
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "Draft it."), in: thread.id, response: SteeringDraft.self)
        var outcomes: [String] = []
        await #expect(throws: CancellationError.self) {
            for try await event in stream {
                guard case .assistantMessageDelta(_, _, let text) = event else { continue }
                do {
                    try await runtime.steer("Shorter.", in: thread.id)
                    outcomes.append("\(text): accepted")
                } catch let error as AgentRuntimeError {
                    outcomes.append("\(text): \(error.code.rawValue)")
                }
                if outcomes.count == 1 { server.releaseHeld() } else { try await runtime.interrupt(in: thread.id) }
            }
        }
        #expect(outcomes == ["Here it is.: accepted", "Still here.\n: turn_not_active"])
        #expect(server.requests.count == 1)
    }

    @Test(arguments: [11, 23, 47])
    func steeringRacingCompletionIsNeverLostNorDuplicated(seed: UInt64) async throws {
        let server = try LoopbackHTTPServer { _ in ResponsesScript.completedReply("resp", "done") }
        defer { server.shutdown() }
        let runtime = try AgentRuntime(configuration: .init(backend: try H.backend(server), stateStore: InMemoryRuntimeStateStore()))
        var random = seed
        var accepted = 0
        var refused = 0
        for round in 0..<25 {
            random = random &* 6364136223846793005 &+ 1442695040888963407
            let yields = Int(random >> 58)  // 0...63
            let thread = try await runtime.createThread()
            let stream = try await runtime.stream(Request(text: "round \(round)"), in: thread.id)
            let consumer = Task { for try await _ in stream {} }
            for _ in 0..<yields { await Task.yield() }
            let text = "steer \(round)"
            var wasAccepted = false
            do {
                try await runtime.steer(text, in: thread.id)
                wasAccepted = true
                accepted += 1
            } catch let error as AgentRuntimeError {
                #expect(error.code == .turnNotActive, "round \(round): \(error.code.rawValue)")
                refused += 1
            }
            try await consumer.value
            let requests = server.requests.filter { request in
                (try? JSONValue(parsing: request.body))?["input"]?.arrayValue?.contains { $0["content"]?[0]?["text"]?.stringValue == "round \(round)" } == true
            }
            let last = try #require(requests.last)
            let mentions = (try JSONValue(parsing: last.body))["input"]?.arrayValue?.filter { $0["content"]?[0]?["text"]?.stringValue == text }.count
            #expect(mentions == (wasAccepted ? 1 : 0), "round \(round)")
            // An accepted steer goes with the first request when it came before it was sent, else with one more.
            #expect(wasAccepted ? (1...2).contains(requests.count) : requests.count == 1, "round \(round)")
        }
        #expect(accepted + refused == 25)
    }
}

/// The one-shot structured reply of the steering tests.
struct SteeringDraft: AgentStructuredOutput {
    let subject: String
    static let responseFormat = AgentStructuredOutputFormat(name: "draft", schema: .object(properties: ["subject": .string()]))
}
