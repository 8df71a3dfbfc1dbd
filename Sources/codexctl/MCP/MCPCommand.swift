import CodexCore
import CodexRuntime
import CodexSchema
import Foundation

/// `codexctl mcp`: look at MCP servers and call their tools by hand.
enum MCPCommand: CLICommand {
    static let name = "mcp"
    static let summary = "List an MCP server's tools and how the runtime treats them, or call one."
    static let help = CommandHelp(
        command: "mcp",
        overview: """
        MCP servers from --mcp NAME=COMMAND, --mcp-url NAME=URL and the [mcp_servers.<name>] tables of --mcp-config \
        (default $XDG_CONFIG_HOME/codexkit/config.toml when it exists); 'send' and 'chat' take the same options and \
        offer the servers' tools to the model.
        """,
        subcommands: subcommandRows
    )
    static var subcommands: [any CLICommand.Type] { [Tools.self, Call.self] }
    static func run(_ arguments: [String]) async -> Int32 { await dispatch(arguments) }

    /// The configured servers, `--server` picking some by name.
    static func servers(_ parsed: ParsedArguments) throws -> CLIMCPServers {
        let servers = try CLIMCPServers(parsed)
        for warning in servers.warnings { Console.error("warning: \(warning)\n") }
        guard !servers.servers.isEmpty else { throw UsageError("no MCP server: give --mcp, --mcp-url or --mcp-config") }
        return servers
    }

    enum Tools: CLICommand {
        static let name = "tools"
        static let summary = "List each server's tools with the runtime's settings and argument checks."
        static let help = CommandHelp(
            command: "mcp tools",
            overview: """
            Connect each server (or the --server ones), list its tools, and show for each the name the model sees \
            (<server>__<tool>), whether it needs approval, runs in parallel and may run again after a crash (from the \
            server's hints, or every tool automatic with --mcp-trust), and how its arguments are checked: strict (the \
            provider enforces the schema too), checked (CodexSchema enforces it before the call), or partly checked \
            (keywords CodexSchema cannot enforce are named).
            """,
            options: [.value("--server", "name", "Only this server.", repeatable: true), .flag("--json", "Print one JSON array.")] + CLIMCPServers.options
        )

        static func run(_ arguments: [String]) async -> Int32 {
            // Ctrl-C or SIGTERM stops the listing and ends the servers before the process exits.
            let interrupts = InterruptWatcher()
            defer { interrupts.stop() }
            var stopped = false
            let status = await runParsed(arguments, validate: { try $0.expectNoPositionals() }) { parsed in
                let configured = try servers(parsed)
                let wanted = Set(parsed.lists["--server"] ?? [])
                let unknown = wanted.subtracting(configured.servers.map(\.configuration.name))
                guard unknown.isEmpty else { throw UsageError("no MCP server named \(unknown.sorted().joined(separator: ", "))") }
                let clients = configured.clients(logSink: NoOpAgentLogSink()).filter { wanted.isEmpty || wanted.contains($0.0.configuration.name) }
                let (outcome, cancelled) = await interrupts.run { try await listAll(clients, trusted: configured.trusted) }
                for (_, client) in clients { await client.shutdown() }
                // A listing that finished before the stop is printed.
                if case .failure = outcome, cancelled {
                    stopped = true
                    return
                }
                let report = try outcome.get()
                if parsed.has("--json") {
                    Console.exactLine(JSONValue.array(report).compactString())
                    return
                }
                for server in report { print(server) }
            }
            return stopped ? interrupts.interruptedStatus : status
        }

        /// Each server's description and tools, as `mcp tools --json` prints them.
        private static func listAll(_ clients: [(CLIMCPServers.Server, MCPClient)], trusted: Bool) async throws -> [JSONValue] {
            var report: [JSONValue] = []
            for (server, client) in clients {
                let description = try await client.connect()
                let listed = try await client.listTools()
                // By name, once: a lookup per tool over the whole list was quadratic (10,000 tools took 10 s).
                let definitions = Dictionary(
                    try await CLIMCPServers.agentTools([(server, client)], trusted: trusted).map { ($0.definition.name, $0.definition) },
                    uniquingKeysWith: { first, _ in first }
                )
                let names = MCPToolNaming.agentToolNames(server: client.name, tools: listed.map(\.name))
                var tools: [JSONValue] = []
                for tool in listed {
                    let agentName = names[tool.name] ?? tool.name
                    let definition = definitions[agentName]
                    let unenforced = tool.unenforcedSchemaKeywords
                    let check = definition?.fitsStrictMode == true ? "strict" : (unenforced.isEmpty ? "checked" : "partly_checked")
                    tools.append([
                        "name": .string(tool.name), "agent_name": .string(agentName), "enabled": .bool(definition != nil),
                        "description": .string(tool.description ?? ""),
                        "approval": .string(definition?.approvalPolicy.rawValue ?? "-"), "parallel": .bool(definition?.supportsParallelExecution ?? false),
                        "replay_safety": .string(definition?.replaySafety.rawValue ?? "-"), "arguments": .string(check),
                        "unenforced_keywords": .array(unenforced.map(JSONValue.string)),
                        "annotations": [
                            "read_only": .bool(tool.annotations.readOnlyHint), "destructive": .bool(tool.annotations.destructiveHint),
                            "idempotent": .bool(tool.annotations.idempotentHint), "open_world": .bool(tool.annotations.openWorldHint),
                        ],
                    ])
                }
                report.append([
                    "server": .string(client.name), "protocol_version": .string(description.era.version),
                    "server_name": description.name.map(JSONValue.string) ?? .null, "tools": .array(tools),
                ])
            }
            return report
        }

        private static func print(_ server: JSONValue) {
            let tools = server["tools"]?.arrayValue ?? []
            Console.line("\(server["server"]?.stringValue ?? "")  protocol \(server["protocol_version"]?.stringValue ?? "")  \(tools.count) tool\(tools.count == 1 ? "" : "s")")
            for tool in tools {
                let name = Console.display(tool["agent_name"]?.stringValue ?? "")
                guard tool["enabled"] == .bool(true) else {
                    Console.line("  \(name)  disabled by the configuration")
                    continue
                }
                var settings = [
                    tool["approval"] == "requires_approval" ? "needs approval" : "no approval",
                    tool["parallel"] == .bool(true) ? "parallel" : "alone",
                    tool["replay_safety"] == "idempotent" ? "replay-safe" : "not replayed",
                ]
                switch tool["arguments"]?.stringValue {
                case "strict": settings.append("arguments strict")
                case "checked": settings.append("arguments checked")
                default:
                    let keywords = tool["unenforced_keywords"]?.arrayValue?.compactMap(\.stringValue) ?? []
                    settings.append("arguments partly checked (not enforced: \(keywords.map(Console.display).joined(separator: " ")))")
                }
                Console.line("  \(name)  \(settings.joined(separator: ", "))")
                let summary = (tool["description"]?.stringValue ?? "").split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
                if !summary.isEmpty { Console.line("    \(Console.display(String(summary.prefix(160))))") }
            }
        }
    }

    enum Call: CLICommand {
        static let name = "call"
        static let summary = "Call one tool of a server with JSON arguments and print its result."
        static let help = CommandHelp(
            command: "mcp call",
            overview: """
            Call TOOL (its name on the server) of the --server server with ARGUMENTS (a JSON object; '-' reads it from \
            standard input; default {}), and print its content blocks (text as it is, other blocks described), or the \
            whole result as JSON with --json. The call is held to what the runtime holds a model's call to: a tool the \
            server does not list (mcp_tool_not_found), one the configuration disables (mcp_tool_disabled), one that \
            needs an approval (mcp_approval_required; --mcp-trust), and arguments its input schema refuses \
            (mcp_arguments_invalid) are refused before anything is sent. A result the tool marks as an error, or whose \
            structured content breaks the tool's output schema (mcp_output_invalid, after the result), exits 1.
            """,
            arguments: [("<tool>", "The tool's name on the server."), ("[<arguments> | -]", "A JSON object.")],
            argumentSynopsis: "<tool> [<arguments> | -]",
            options: [.value("--server", "name", "The server.", required: true), .flag("--json", "Print the result as one JSON object.")] + CLIMCPServers.options
        )

        static func run(_ arguments: [String]) async -> Int32 {
            // Ctrl-C or SIGTERM cancels the call (the server is told) and ends the server before the
            // process exits: a tool never keeps running for a command that is gone. Watched from the
            // start of the call: arguments read from standard input are read with the default actions.
            var interrupts: InterruptWatcher?
            defer { interrupts?.stop() }
            var stopped = false
            var failed = false
            let status = await runParsed(arguments, validate: { parsed in
                guard (1...2).contains(parsed.positionals.count) else { throw UsageError("give a tool and, optionally, its arguments") }
            }) { parsed in
                let configured = try servers(parsed)
                guard let server = configured.servers.first(where: { $0.configuration.name == parsed.options["--server"] }) else {
                    throw UsageError("no MCP server named \(parsed.options["--server"] ?? "")")
                }
                var argumentsObject = JSONObject()
                if parsed.positionals.count == 2 {
                    let given = parsed.positionals[1]
                    let bytes = given == "-" ? try Console.readInput("-", limit: 1 << 20) : Array(given.utf8)
                    guard case .object(let object)? = try? JSONValue(parsing: bytes) else { throw UsageError("the arguments are not a JSON object") }
                    argumentsObject = object
                }
                let client = try MCPClient(server.configuration)
                let tool = parsed.positionals[0]
                let callArguments = argumentsObject
                let watcher = InterruptWatcher()
                interrupts = watcher
                let (outcome, cancelled) = await watcher.run { () async throws -> (MCPToolResult, JSONSchemaValidator?) in
                    let outputValidator = try await admit(tool, arguments: callArguments, of: server, client, trusted: configured.trusted)
                    return (try await client.callTool(tool, arguments: callArguments), outputValidator)
                }
                await client.shutdown()
                // A call that finished before the stop keeps its result.
                if case .failure = outcome, cancelled {
                    stopped = true
                    return
                }
                let (result, outputValidator) = try outcome.get()
                failed = result.isError
                if parsed.has("--json") {
                    Console.exactLine(json(result).compactString())
                } else {
                    for block in result.content { Console.line(describe(block)) }
                    if let structured = result.structuredContent, !result.content.contains(where: { if case .text = $0 { return true } else { return false } }) {
                        Console.line(structured.compactString())
                    }
                }
                // The runtime hands the model such a result as a failure: said after it, and exit 1. (A result
                // the tool marks as an error is not held to the schema, as in the runtime.)
                if !result.isError, let outputValidator, let structured = result.structuredContent, let problem = Self.problem(structured, outputValidator) {
                    throw CLIFailure.Thrown(code: "mcp_output_invalid", message: "the structured content breaks the tool's output schema: \(problem)")
                }
            }
            if stopped, let interrupts { return interrupts.interruptedStatus }
            return status == Console.Status.success && failed ? Console.Status.failure : status
        }

        /// Refuses a call the runtime would not make for a model: a tool the server does not list, one the
        /// configuration disables, one that needs an approval (this command cannot give one), or arguments
        /// its input schema refuses (the part CodexSchema enforces, as for a model's call). Returns the
        /// tool's output-schema validator, when it has one.
        private static func admit(
            _ tool: String, arguments: JSONObject, of server: CLIMCPServers.Server, _ client: MCPClient, trusted: Bool
        ) async throws -> JSONSchemaValidator? {
            let listed = try await client.listTools()
            guard let described = listed.first(where: { $0.name == tool }) else {
                throw CLIFailure.Thrown(code: "mcp_tool_not_found", message: "the server \(client.name) lists no tool named \(Console.display(tool))")
            }
            let agentName = MCPToolNaming.agentToolNames(server: client.name, tools: listed.map(\.name))[tool] ?? tool
            guard let agentTool = try await CLIMCPServers.agentTools([(server, client)], trusted: trusted).first(where: { $0.definition.name == agentName }) else {
                throw CLIFailure.Thrown(code: "mcp_tool_disabled", message: "the configuration disables the tool \(Console.display(tool)) of \(client.name)")
            }
            guard agentTool.definition.approvalPolicy == .automatic else {
                throw CLIFailure.Thrown(
                    code: "mcp_approval_required",
                    message: "the tool \(Console.display(tool)) of \(client.name) needs an approval (its server does not mark it read-only), which mcp call "
                        + "cannot give; --mcp-trust trusts the tools of the servers given"
                )
            }
            let schema = agentTool.argumentSchema ?? agentTool.definition.inputSchema
            if let validator = try? JSONSchemaValidator(schema: schema), let problem = Self.problem(.object(arguments), validator) {
                throw CLIFailure.Thrown(code: "mcp_arguments_invalid", message: "the arguments break the tool's input schema: \(problem)")
            }
            return described.outputSchema.flatMap { try? JSONSchemaValidator(schema: $0) }
        }

        /// What is wrong with `value` under `validator` (its first three errors), or `nil` when it is
        /// valid. A value too complex to check is refused, as the runtime refuses it.
        private static func problem(_ value: JSONValue, _ validator: JSONSchemaValidator) -> String? {
            do {
                let verdict = try validator.validate(value)
                return verdict.isValid ? nil : verdict.errors.prefix(3).map(\.description).joined(separator: "; ")
            } catch {
                return "it is too complex to check (\(error.code.rawValue))"
            }
        }

        private static func describe(_ block: MCPContent) -> String {
            switch block {
            case .text(let text): return Console.display(text)
            case .image(let data, let mimeType): return "[image \(Console.display(mimeType)), \(data.count) bytes]"
            case .audio(let data, let mimeType): return "[audio \(Console.display(mimeType)), \(data.count) bytes]"
            case .resourceLink(let uri, let name, _): return "[resource link \(Console.display(name)) <\(Console.display(uri))>]"
            case .textResource(let uri, _, let text): return "[resource <\(Console.display(uri))>]\n\(Console.display(text))"
            case .blobResource(let uri, _, let data): return "[binary resource <\(Console.display(uri))>, \(data.count) bytes]"
            case .unknown(let type): return "[content of type \(Console.display(type))]"
            }
        }

        private static func json(_ result: MCPToolResult) -> JSONValue {
            let blocks: [JSONValue] = result.content.map { block in
                switch block {
                case .text(let text): return ["type": "text", "text": .string(text)]
                case .image(let data, let mimeType): return ["type": "image", "mime_type": .string(mimeType), "bytes": .number(JSONNumber(data.count))]
                case .audio(let data, let mimeType): return ["type": "audio", "mime_type": .string(mimeType), "bytes": .number(JSONNumber(data.count))]
                case .resourceLink(let uri, let name, _): return ["type": "resource_link", "uri": .string(uri), "name": .string(name)]
                case .textResource(let uri, _, let text): return ["type": "resource", "uri": .string(uri), "text": .string(text)]
                case .blobResource(let uri, _, let data): return ["type": "resource", "uri": .string(uri), "bytes": .number(JSONNumber(data.count))]
                case .unknown(let type): return ["type": .string(type)]
                }
            }
            return ["content": .array(blocks), "structured_content": result.structuredContent ?? .null, "is_error": .bool(result.isError)]
        }
    }
}
