import CodexCore
import CodexRuntime
import CodexSchema
import Foundation

extension DemoRun {
    /// Step 9: an MCP server process (this executable as `codexctl demo mcp-server`) started over stdio,
    /// its read-only tool offered to the model with the settings its hints give, called in a turn with
    /// its progress streamed, and the process ended with the client.
    func mcpTools(_ server: DemoServer) async throws {
        narrator.step(9, "MCP tools: a server process started over stdio, its tool called by the model, its progress streamed")
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let client = try MCPClient(MCPServerConfiguration(name: "parcels", transport: .stdio(command: executable, arguments: ["demo", DemoMCPServer.name])))
        do {
            let description = try await client.connect()
            let tools = try await client.agentTools()
            narrator.say("mcp_connected", "connected to \(description.name ?? "the server") over stdio: protocol \(description.era.version), \(tools.count) tool\(tools.count == 1 ? "" : "s")", [
                "server": .string(description.name ?? ""), "protocol_version": .string(description.era.version), "tools": .number(JSONNumber(tools.count)),
            ])
            for tool in tools {
                let definition = tool.definition
                narrator.say("mcp_tool", "\(definition.name): read-only by its server's hints, so it runs in parallel "
                    + (definition.approvalPolicy == .automatic ? "without approval" : "after approval")
                    + (definition.replaySafety == .idempotent ? " and may run again after a crash" : ""), [
                    "name": .string(definition.name), "approval": .string(definition.approvalPolicy.rawValue),
                    "parallel": .bool(definition.supportsParallelExecution), "replay_safety": .string(definition.replaySafety.rawValue),
                ])
            }
            let runtime = try makeRuntime(server, tools: tools)
            let thread = try await runtime.createThread(title: "Parcel A-3")
            narrator.say("user", "user: \(DemoScript.mcpPrompt)")
            for try await event in try await runtime.stream(Request(text: DemoScript.mcpPrompt), in: thread.id) {
                switch event {
                case .toolCallStarted(let call):
                    narrator.say("tool_call", "tool call: \(call.toolName) \(call.arguments)", ["tool": .string(call.toolName), "arguments": .string(call.arguments)])
                case .progress(.toolProgress(_, let progress, let total, let message)):
                    let amount = "\(Int(progress))" + (total.map { "/\(Int($0))" } ?? "")
                    narrator.say("tool_progress", "progress: \(amount) \(message ?? "")", [
                        "progress": JSONNumber(progress).map(JSONValue.number) ?? .null, "message": message.map(JSONValue.string) ?? .null,
                    ])
                case .toolCallFinished(let result):
                    narrator.say("tool_result", "tool result: \(result.joinedText)", ["status": .string(result.status.rawValue)])
                case .messageCommitted(let message) where message.role == .assistant && !message.text.isEmpty:
                    narrator.say("assistant", "assistant: \(message.text)")
                default:
                    break
                }
            }
        } catch {
            await client.shutdown()
            throw error
        }
        let pid = client.processStarts
        await client.shutdown()
        narrator.say("mcp_ended", "the client shut down: the server process (started \(pid == 1 ? "once" : "\(pid) times")) ended with it")
    }
}
