import CodexCore
import CodexSchema
import Foundation

extension MCPClient {
    /// The server's tools as host tools for ``AgentRuntime``: each is named `<server>__<tool>`
    /// (``MCPToolNaming``), checks its arguments against the tool's input schema before the call, and
    /// answers the model with the tool's result.
    ///
    /// ```swift
    /// let client = try MCPClient(MCPServerConfiguration(
    ///     name: "files", transport: .stdio(command: "python3", arguments: ["files_server.py"])
    /// ))
    /// let tools = try await client.agentTools(policy: MCPToolPolicy(approvalPolicy: .automatic))
    /// let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: store, tools: tools))
    /// ```
    ///
    /// - An input schema that uses keywords CodexSchema cannot enforce still offers the tool (not in
    ///   strict mode): the arguments are checked against the rest of the schema, and the log names the
    ///   keywords (`mcp.tool.schema_partially_enforced`).
    /// - Text blocks become text. An image block goes through the tool-image path
    ///   (``ToolExecutionContext/attachImage(_:)``: a complete PNG, JPEG, GIF, WebP, HEIC or HEIF image
    ///   by its own signature, at most 50 MiB, kept with the conversation's images) and a line of text
    ///   says whether it was kept. Audio and binary resources are described in a line of text (their
    ///   bytes are not passed on: the model takes no audio in tool output). Resource links and text
    ///   resources become text naming their URI. `structuredContent` is checked against the tool's
    ///   `outputSchema` when it has one (a result that breaks it is a failed result) and is added as
    ///   JSON text when no text block already carries it. `isError` makes the result a failure the
    ///   model sees.
    /// - The server's progress notifications become
    ///   `.progress(.toolProgress(invocationID:progress:total:message:))` events of the turn.
    /// - A call the server refuses, that times out or whose server dies is a failed result naming the
    ///   error code; the next call starts the server again.
    ///
    /// - Parameters:
    ///   - policy: Settings for every tool of this server, over the server's hints.
    ///   - overrides: Settings for single tools (keyed by the tool's name on the server), over `policy`.
    /// - Throws: ``MCPError`` when the server cannot be reached or listed.
    public func agentTools(policy: MCPToolPolicy = .hints, overrides: [String: MCPToolPolicy] = [:]) async throws -> [AgentTool] {
        let tools = try await listTools()
        let names = MCPToolNaming.agentToolNames(server: name, tools: tools.map(\.name))
        var agentTools: [AgentTool] = []
        for tool in tools {
            guard let agentName = names[tool.name] else { continue }
            agentTools.append(agentTool(tool, named: agentName, policy: policy.overridden(by: overrides[tool.name])))
        }
        return agentTools.sorted { $0.definition.name < $1.definition.name }
    }

    private func agentTool(_ tool: MCPTool, named agentName: String, policy: MCPToolPolicy) -> AgentTool {
        let hints = tool.annotations
        let approval = policy.approvalPolicy ?? (!hints.readOnlyHint && hints.destructiveHint ? .requiresApproval : .automatic)
        let parallel = policy.supportsParallelExecution ?? hints.readOnlyHint
        let replay = policy.replaySafety ?? (hints.readOnlyHint || hints.idempotentHint ? .idempotent : .notReplayable)
        let definition = ToolDefinition(
            name: agentName, description: tool.description ?? tool.title ?? "", inputSchema: tool.inputSchema, approvalPolicy: approval,
            supportsParallelExecution: parallel, replaySafety: replay
        )
        let enforceable = MCPSchemaSubset.enforceable(tool.inputSchema)
        if !enforceable.dropped.isEmpty {
            logSink.record(AgentLogEvent(
                level: .notice, category: .mcp, name: "mcp.tool.schema_partially_enforced",
                message: "arguments are checked against the schema without the keywords CodexSchema cannot enforce",
                metadata: ["server": name, "tool": agentName, "keywords": enforceable.dropped.prefix(8).joined(separator: " ")]
            ))
        }
        let outputValidator = tool.outputSchema.flatMap { try? JSONSchemaValidator(schema: $0) }
        let serverToolName = tool.name
        let serverName = name
        var agentTool = AgentTool(definition: definition) { [self] invocation, context in
            let arguments = context.arguments.objectValue ?? JSONObject()
            // Progress arrives on a reader thread; a bounded buffer (the newest 64) keeps a flooding
            // server from holding memory, and one task forwards the reports in order.
            let (reports, reporter) = AsyncStream.makeStream(of: MCPProgress.self, bufferingPolicy: .bufferingNewest(64))
            let forwarding = Task {
                for await report in reports { await context.reportProgress(report.progress, total: report.total, message: report.message) }
            }
            let result: MCPToolResult
            do {
                result = try await callTool(serverToolName, arguments: arguments) { reporter.yield($0) }
                reporter.finish()
                await forwarding.value
            } catch let error as MCPError {
                reporter.finish()
                await forwarding.value
                try Task.checkCancellation()
                var text = "The MCP server '\(serverName)' could not run the tool (\(error.code.rawValue))."
                if let remote = error.remoteMessage, !remote.isEmpty { text += " The server said: \(remote)" }
                return context.failure(text)
            } catch {
                reporter.finish()
                forwarding.cancel()
                throw error
            }
            return MCPToolResultMapping.envelope(result, for: invocation, outputValidator: outputValidator) { context.attachImage($0) }
        }
        if enforceable.schema != tool.inputSchema { agentTool.argumentSchema = enforceable.schema }
        return agentTool
    }
}
