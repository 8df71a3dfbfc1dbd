import CodexCore
@testable import CodexRuntime
import CodexSchema
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// MCP tools as host tools of a turn: names, hints turned into scheduling, approval and replay settings,
/// argument checks before the call, progress events, images kept through the tool-image path.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct MCPAgentToolTests {
    @Test func hintsBecomeSettingsTheHostCanOverride() async throws {
        let client = try MCPClient(try await MCPServers.stdio("reference", script: "reference_server.py"))
        defer { Task { await client.shutdown() } }
        let tools = try await client.agentTools(overrides: ["echo": MCPToolPolicy(approvalPolicy: .automatic, supportsParallelExecution: true)])
        let byName = Dictionary(uniqueKeysWithValues: tools.map { ($0.definition.name, $0.definition) })
        func settings(_ name: String) -> String {
            byName[name].map { "\($0.approvalPolicy.rawValue) \($0.supportsParallelExecution ? "parallel" : "alone") \($0.replaySafety.rawValue)" } ?? "missing"
        }
        #expect(tools.map(\.definition.name) == tools.map(\.definition.name).sorted())
        #expect(byName.keys.allSatisfy { $0.hasPrefix("reference__") } && byName.count == 13)
        // Read-only: parallel, automatic, replay-safe.
        #expect(settings("reference__lookup") == "automatic parallel idempotent")
        // Not read-only, destructive, idempotent: approval, alone, replay-safe.
        #expect(settings("reference__delete_note") == "requires_approval alone idempotent")
        // No hints: the specification's defaults (destructive, not idempotent).
        #expect(settings("reference__add") == "requires_approval alone not_replayable")
        // The host's override wins.
        #expect(settings("reference__echo") == "automatic parallel not_replayable")
        // `pattern` cannot be enforced: checked against the rest, the model still sees it.
        let codeCheck = try #require(tools.first { $0.definition.name == "reference__code_check" })
        #expect(codeCheck.definition.inputSchema["properties"]?["code"]?["pattern"] == "^[A-Z]+$")
        #expect(codeCheck.argumentSchema?["properties"]?["code"]?["pattern"] == nil)
        #expect(codeCheck.argumentSchema?["properties"]?["code"]?["maxLength"] == 5)
        #expect(!codeCheck.definition.fitsStrictMode)
    }

    @Test func aTurnCallsMCPToolsWithProgressImagesAndArgumentChecks() async throws {
        let log = InMemoryAgentLogSink()
        let client = try MCPClient(try await MCPServers.stdio("reference", script: "reference_server.py"), logSink: log)
        defer { Task { await client.shutdown() } }
        let tools = try await client.agentTools(policy: MCPToolPolicy(approvalPolicy: .automatic))
        #expect(log.events(named: "mcp.tool.schema_partially_enforced").map { $0.metadata["keywords"] ?? "" } == ["/properties/code/pattern"])
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([
            .event(.toolCallsRequested([
                call("c1", "reference__count_to", arguments: #"{"n": 3}"#), call("c2", "reference__picture"),
                call("c3", "reference__code_check", arguments: #"{"code": "TOOLONG"}"#), call("c4", "reference__code_check", arguments: #"{"code": "ABC"}"#),
                call("c5", "reference__failing"),
            ])),
            .awaitToolResults, .complete(),
        ])])
        let directory = try temporaryDirectory("codexkit-mcp-turn")
        let runtime = try AgentRuntime(configuration: .init(
            backend: backend, stateStore: try SQLiteRuntimeStateStore(path: directory.appendingPathComponent("state.sqlite").path), tools: tools
        ))
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "use the tools"), in: thread.id))
        #expect(error == nil)
        let progress = events.compactMap { event -> String? in
            guard case .progress(.toolProgress(let id, let value, let total, let message)) = event else { return nil }
            return "\(id.rawValue) \(value)/\(total ?? -1) \(message ?? "")"
        }
        #expect(progress == ["c1 1.0/3.0 counted 1", "c1 2.0/3.0 counted 2", "c1 3.0/3.0 counted 3"])
        let results = Dictionary(uniqueKeysWithValues: backend.submittedResults.map { ($0.invocationID.rawValue, $0) })
        #expect(results["c1"]?.status == .success && results["c1"]?.joinedText == "counted to 3")
        #expect(results["c2"]?.joinedText == "[image: image/png, 69 bytes, kept with the conversation's images]")
        // The argument check refused the too-long code before the server saw it; the valid one ran.
        #expect(results["c3"]?.status == .failure && results["c3"]?.joinedText.contains("maxLength") == true)
        #expect(results["c4"]?.status == .success && results["c4"]?.joinedText == "code ABC ok")
        #expect(results["c5"]?.status == .failure && results["c5"]?.joinedText == "Error executing tool failing: this tool always fails")
        let images = try await runtime.history(of: thread.id, query: AgentHistoryQuery(limit: 100)).items.flatMap { item -> [AgentImageAttachment] in
            if case .message(let message) = item, message.role == .assistant { return message.images }
            return []
        }
        #expect(images.map(\.mimeType) == ["image/png"] && images.first?.data.count == 69)
    }

    @Test func aCallWhoseServerDiesIsAFailedResultAndTheNextStartsItAgain() async throws {
        let client = try MCPClient(try await MCPServers.stdio("hostile", script: "hostile_server.py", arguments: ["die"]))
        defer { Task { await client.shutdown() } }
        let tools = try await client.agentTools(policy: MCPToolPolicy(approvalPolicy: .automatic))
        let tool = try #require(tools.first)
        let invocation = call("d1", "hostile__poke")
        let result = try await tool.execute(invocation, ToolExecutionContext(invocation: invocation, threadID: AgentThreadID(), turnID: AgentTurnID(), arguments: [:]))
        #expect(result.status == .failure && result.joinedText == "The MCP server 'hostile' could not run the tool (mcp_server_exited).")
        #expect(try await client.listTools().map(\.name) == ["poke"] && client.processStarts == 2)
    }

    @Test func aProviderOffersTheChangedListAtTheNextTurn() async throws {
        let client = try MCPClient(try await MCPServers.stdio("reference", script: "reference_server.py"))
        defer { Task { await client.shutdown() } }
        let changed = Signal()
        client.onToolListChange { changed.fire() }
        let backend = FixtureAgentBackend(turns: [
            FixtureAgentBackend.Turn([.event(.toolCallsRequested([call("a1", "reference__add_tool", arguments: #"{"name": "fresh"}"#)])), .awaitToolResults, .complete()]),
            FixtureAgentBackend.Turn([.event(.toolCallsRequested([call("f1", "reference__fresh")])), .awaitToolResults, .complete()]),
        ])
        let runtime = try AgentRuntime(configuration: .init(
            backend: backend, stateStore: InMemoryRuntimeStateStore(), toolProviders: [client.toolProvider(policy: MCPToolPolicy(approvalPolicy: .automatic))]
        ))
        let thread = try await runtime.createThread()
        let first = await collect(try await runtime.stream(Request(text: "add a tool"), in: thread.id))
        #expect(first.error == nil)
        #expect(backend.requests.first?.tools.contains { $0.name == "reference__fresh" } == false)
        await changed.wait()
        let second = await collect(try await runtime.stream(Request(text: "use it"), in: thread.id))
        #expect(second.error == nil)
        #expect(backend.requests.last?.tools.contains { $0.name == "reference__fresh" } == true)
        #expect(backend.submittedResults.map(\.joinedText) == ["added tool fresh", "hello from fresh"])
    }

    @Test func aProviderThatFailsFailsTheTurnBeforeAnythingIsWritten() async throws {
        struct Broken: AgentToolProvider {
            func currentTools() async throws -> [AgentTool] { throw MCPError(code: .serverExited, message: "gone") }
        }
        let store = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(backend: FixtureAgentBackend(turns: [.reply("unused")]), stateStore: store, toolProviders: [Broken()]))
        let thread = try await runtime.createThread()
        await #expect(throws: MCPError.self) { _ = try await runtime.send(Request(text: "hi"), in: thread.id) }
        #expect(try await store.history(of: thread.id, query: AgentHistoryQuery()).items.isEmpty)
        #expect(try await store.latestTurn(of: thread.id) == nil)
    }
}
