import CodexCore
import CodexRuntime
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Connections across turns and model passes, counted by the loopback server, for both HTTP clients.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct ConnectionReuseTests {
    enum Client: String, CaseIterable, CustomTestStringConvertible {
        case curl, urlSession

        func make() -> any HTTPClient {
            switch self {
            case .curl: CurlHTTPClient()
            case .urlSession: URLSessionHTTPClient()
            }
        }

        var testDescription: String { rawValue }
    }

    private func runtime(_ server: LoopbackHTTPServer, client: Client, tools: [AgentTool] = []) throws -> AgentRuntime {
        var configuration = CodexResponsesBackendConfiguration()
        configuration.endpoint = try ResponsesEndpoint(baseURL: server.baseURL.appendingPathComponent("api/codex"), profile: .chatGPT)
        configuration.retryPolicy = .disabled
        let backend = CodexResponsesBackend(configuration: configuration, httpClient: client.make(), authProvider: APIKeyAuthProvider(apiKey: "sk-test"))
        return try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore(), tools: tools))
    }

    /// One turn of four passes: three asking for the lookup tool, then the answer.
    private static func turnReplies(_ turn: Int) -> [ScriptedReply] {
        (0..<3).map { pass -> ScriptedReply in
            var script = ResponsesScript()
            script.created("resp_\(turn)_\(pass)")
            script.functionCallDone("fc_\(turn)_\(pass)", callID: "call_\(turn)_\(pass)", name: "lookup", arguments: "{}", index: 0)
            script.completed("resp_\(turn)_\(pass)")
            return .sse(script.events)
        } + [ResponsesScript.completedReply("resp_\(turn)_3", "Done \(turn).")]
    }

    @Test(arguments: Client.allCases)
    func tenTurnsOfFourPassesUseOneKeptAliveConnection(_ client: Client) async throws {
        let server = try LoopbackHTTPServer(replies: (0..<10).flatMap(Self.turnReplies))
        defer { server.shutdown() }
        let lookup = AgentTool(definition: BackendHarness.tool("lookup")) { .success($0, text: "found") }
        let runtime = try runtime(server, client: client, tools: [lookup])
        let thread = try await runtime.createThread()
        for turn in 0..<10 {
            #expect(try await runtime.send(Request(text: "turn \(turn)"), in: thread.id) == "Done \(turn).")
        }
        #expect(server.requests.count == 40)
        #expect(server.requests.map(\.connectionID) == Array(repeating: 1, count: 40), "every pass of every turn reused the one connection")
        #expect(server.acceptedConnectionCount == 1)
    }

    @Test(arguments: Client.allCases)
    func concurrentStreamsUseAtMostOneConnectionEach(_ client: Client) async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        script.messageDone("msg_1", "Together.", index: 0)
        script.completed("resp_1")
        let held = ScriptedReply(headers: [.init(name: "Content-Type", value: "text/event-stream")], parts: [.hold, .bytes(Array(script.text.utf8))], framing: .chunked)
        let server = try LoopbackHTTPServer { _ in held }
        defer { server.shutdown() }
        let runtime = try runtime(server, client: client)
        var threads: [AgentThreadID] = []
        for _ in 0..<3 { threads.append(try await runtime.createThread().id) }
        for round in 1...2 {
            let turns = threads.map { thread in Task { try await runtime.send(Request(text: "together"), in: thread) } }
            let replies = try await withTaskCancellationHandler {
                _ = await server.waitForRequests(count: 3 * round, timeout: .hangGuard)
                server.releaseHeld()
                var replies: [String] = []
                for turn in turns { replies.append(try await turn.value) }
                return replies
            } onCancel: { turns.forEach { $0.cancel() } }
            #expect(replies == ["Together.", "Together.", "Together."])
        }
        #expect(server.requests.count == 6)
        #expect(server.acceptedConnectionCount <= 3, "three streams at once need at most three connections, reused by the second round")
    }

    @Test(arguments: Client.allCases)
    func aServerThatClosesAfterEachReplyGetsANewConnectionWithoutAnError(_ client: Client) async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        script.messageDone("msg_1", "Closed.", index: 0)
        script.completed("resp_1")
        let closing = ScriptedReply.sse(script.events, headers: [.init(name: "Connection", value: "close")])
        let server = try LoopbackHTTPServer { _ in closing }
        defer { server.shutdown() }
        let runtime = try runtime(server, client: client)
        let thread = try await runtime.createThread()
        for _ in 0..<3 { #expect(try await runtime.send(Request(text: "again"), in: thread.id) == "Closed.") }
        #expect(server.acceptedConnectionCount == 3)
    }
}
