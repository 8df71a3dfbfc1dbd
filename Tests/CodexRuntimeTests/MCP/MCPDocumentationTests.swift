import CodexCore
import CodexRuntime
import CodexSchema
import CodexTestSupport
import Foundation
import Testing

/// Docs/MCP.md's examples, as written: the page shows exactly the code below, run against the official
/// Python SDK's reference server, over stdio and over Streamable HTTP.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct MCPDocumentationTests {
    @Test func theMCPPageExamplesRunAsWritten() async throws {
        // example 1
        /// A turn whose model calls a stdio MCP server's tool: the server is started, its tools are
        /// offered to the model, the call's progress arrives as events, and the server ends with the client.
        func countWithMCP(serverCommand: String, serverArguments: [String], model: any AgentBackend) async throws -> (reply: String, progress: [String]) {
            let reference = try MCPClient(MCPServerConfiguration(
                name: "reference", transport: .stdio(command: serverCommand, arguments: serverArguments)
            ))
            // The server's tools, named reference__<tool>; its hints set approval, parallelism and replay
            // safety, and this host runs every tool without asking.
            let tools = try await reference.agentTools(policy: MCPToolPolicy(approvalPolicy: .automatic))
            let runtime = try AgentRuntime(configuration: .init(backend: model, stateStore: InMemoryRuntimeStateStore(), tools: tools))
            let thread = try await runtime.createThread()
            var reply = ""
            var progress: [String] = []
            for try await event in try await runtime.stream(Request(text: "Count to three."), in: thread.id) {
                switch event {
                case .progress(.toolProgress(_, let value, let total, let message)):
                    progress.append("\(Int(value)) of \(Int(total ?? 0)): \(message ?? "")")
                case .assistantMessageDelta(_, _, let delta):
                    reply += delta
                default:
                    break
                }
            }
            await reference.shutdown()
            return (reply, progress)
        }
        // end
        // example 2
        /// One call to a Streamable HTTP server, without a turn.
        func addOverHTTP(url: URL, token: String) async throws -> (version: String, sum: Int?) {
            let remote = try MCPClient(MCPServerConfiguration(
                name: "remote", transport: .streamableHTTP(url: url, bearerToken: token), requestTimeout: .seconds(30)
            ))
            do {
                let server = try await remote.connect()
                let result = try await remote.callTool("add", arguments: ["a": 2, "b": 40])
                await remote.shutdown()
                return (server.era.version, result.structuredContent?["result"]?.numberValue?.intValue)
            } catch {
                await remote.shutdown()
                throw error
            }
        }
        // end

        let model = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([
            .event(.toolCallsRequested([ToolInvocation(id: ToolInvocationID(rawValue: "call_1"), toolName: "reference__count_to", arguments: #"{"n": 3}"#)])),
            .awaitToolResults, .event(.assistantMessageDelta("Counted to three.")), .complete(),
        ])])
        let python = try await MCPTestPython.interpreter()
        let counted = try await countWithMCP(serverCommand: python, serverArguments: [MCPTestPython.script("reference_server.py")], model: model)
        #expect(counted.reply == "Counted to three.")
        #expect(counted.progress == ["1 of 3: counted 1", "2 of 3: counted 2", "3 of 3: counted 3"])
        #expect(model.submittedResults.map(\.joinedText) == ["counted to 3"])

        let server = try await MCPHTTPTestServer.start("reference_server.py")
        let added = try await addOverHTTP(url: server.url, token: "example-token-0123456789")
        await server.stop()
        #expect(added.version == "2026-07-28" && added.sum == 42)
    }

    @Test func theMCPPageShowsExactlyTheTestedExamples() throws {
        let page = try DocumentationExamples.page("Docs/MCP.md")
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let documented = DocumentationExamples.withoutImports(DocumentationExamples.swiftBlocks(inPage: page, before: "## Servers, revisions and transports"))
        #expect(documented == DocumentationExamples.examples(inSource: source))
    }
}
