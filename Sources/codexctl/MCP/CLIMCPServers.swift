import CodexCore
import CodexRuntime
import CodexSchema
import CodexTransport
import Foundation

/// The MCP servers of one `codexctl` run: `--mcp NAME=COMMAND`, `--mcp-url NAME=URL`, and the
/// `[mcp_servers.<name>]` tables of a TOML file (the Codex CLI's `config.toml` layout).
struct CLIMCPServers {
    /// One server, with the tool filters and the policy of its entry.
    struct Server {
        let configuration: MCPServerConfiguration
        /// Only these tools (by their names on the server), when given.
        let enabledTools: Set<String>?
        /// Never these tools.
        let disabledTools: Set<String>
    }

    /// The options `send`, `chat` and `mcp` take.
    static let options: [CLIOption] = [
        .value("--mcp", "name=command", "An MCP server over stdio: NAME=COMMAND [ARGS…], split like a shell (quotes, backslashes).", repeatable: true),
        .value("--mcp-url", "name=url", "An MCP server over Streamable HTTP (http or https).", repeatable: true),
        .value("--mcp-config", "file", """
            A TOML file whose [mcp_servers.<name>] tables list servers as the Codex CLI's config.toml does (command, args, env, cwd, \
            url, bearer_token_env_var, http_headers, env_http_headers, startup_timeout_sec, tool_timeout_sec, enabled, \
            enabled_tools, disabled_tools). Default: $XDG_CONFIG_HOME/codexkit/config.toml (else ~/.config/codexkit/config.toml) when it exists.
            """),
        .flag("--mcp-trust", "Run MCP tools without asking. Without it, a tool its server does not mark read-only needs an approval, which this command cannot give: its calls are refused."),
    ]

    /// The largest configuration file read.
    static let maximumConfigBytes = 1 << 20

    let servers: [Server]
    /// Whether tools run without approval.
    let trusted: Bool
    /// Problems worth a warning (unknown keys), one line each.
    let warnings: [String]

    /// Reads the options (and the configuration file).
    ///
    /// - Throws: ``UsageError`` naming the option, the file and line, or the server.
    init(_ parsed: ParsedArguments, environment: [String: String] = ProcessInfo.processInfo.environment) throws(UsageError) {
        var servers: [Server] = []
        var warnings: [String] = []
        let configPath = parsed.options["--mcp-config"] ?? Self.defaultConfigPath(environment)
        if let configPath {
            let (fromFile, fileWarnings) = try Self.read(configPath, environment: environment)
            servers += fromFile
            warnings += fileWarnings
        }
        for entry in parsed.lists["--mcp"] ?? [] {
            let (name, commandLine) = try Self.pair(entry, option: "--mcp")
            let words = try ShellWords.split(commandLine)
            guard let command = words.first else { throw UsageError("--mcp \(name)= needs a command") }
            servers.append(Server(configuration: MCPServerConfiguration(name: name, transport: .stdio(command: command, arguments: Array(words.dropFirst()))), enabledTools: nil, disabledTools: []))
        }
        for entry in parsed.lists["--mcp-url"] ?? [] {
            let (name, text) = try Self.pair(entry, option: "--mcp-url")
            guard let url = URL(string: text) else { throw UsageError("--mcp-url \(name): not a URL") }
            servers.append(Server(configuration: MCPServerConfiguration(name: name, transport: .streamableHTTP(url: url)), enabledTools: nil, disabledTools: []))
        }
        var seen: Set<String> = []
        for server in servers {
            do {
                try server.configuration.validate()
            } catch {
                throw UsageError("MCP server '\(server.configuration.name.prefix(40))': \(error.message)")
            }
            guard seen.insert(server.configuration.name).inserted else { throw UsageError("MCP server '\(server.configuration.name)' is given twice") }
        }
        self.servers = servers
        trusted = parsed.has("--mcp-trust")
        self.warnings = warnings
    }

    /// `$XDG_CONFIG_HOME/codexkit/config.toml` (else `~/.config/codexkit/config.toml`) when it exists.
    static func defaultConfigPath(_ environment: [String: String]) -> String? {
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? (UserHome.path(environment) + "/.config")
        let path = base + "/codexkit/config.toml"
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    private static func pair(_ entry: String, option: String) throws(UsageError) -> (String, String) {
        guard let equals = entry.firstIndex(of: "="), entry.startIndex != equals else { throw UsageError("\(option) takes NAME=VALUE") }
        return (String(entry[..<equals]), String(entry[entry.index(after: equals)...]))
    }

    // MARK: - The configuration file

    private static let knownKeys: Set<String> = [
        "command", "args", "env", "cwd", "url", "bearer_token_env_var", "http_headers", "env_http_headers", "startup_timeout_sec",
        "tool_timeout_sec", "enabled", "enabled_tools", "disabled_tools",
    ]

    /// The enabled servers of the file at `path`, and warnings for keys this build does not use.
    static func read(_ path: String, environment: [String: String]) throws(UsageError) -> ([Server], [String]) {
        let bytes: [UInt8]
        do {
            bytes = try BoundedInputFile.readAll(path, limit: maximumConfigBytes)
        } catch {
            throw UsageError("cannot read \(path): \(error)")
        }
        let document: JSONObject
        do {
            document = try TOMLReader.parse(bytes)
        } catch {
            throw UsageError("\(path): \(error)")
        }
        guard let table = document["mcp_servers"] else { return ([], []) }
        guard case .object(let entries) = table else { throw UsageError("\(path): mcp_servers is not a table") }
        var servers: [Server] = []
        var warnings: [String] = []
        for member in entries.members {
            let name = member.key
            func fail(_ reason: String) -> UsageError { UsageError("\(path): [mcp_servers.\(name.prefix(40))] \(reason)") }
            guard case .object(let entry) = member.value else { throw fail("is not a table") }
            for key in entry.keys where !knownKeys.contains(key) {
                if key == "bearer_token" { throw fail("bearer_token is refused: put the token in an environment variable and name it with bearer_token_env_var") }
                warnings.append("\(path): [mcp_servers.\(name.prefix(40))] key '\(key.prefix(40))' is not used by codexctl")
            }
            if entry["enabled"] == .bool(false) { continue }
            let strings: (String) throws(UsageError) -> [String: String] = { key throws(UsageError) in
                guard let value = entry[key] else { return [:] }
                guard case .object(let object) = value else { throw fail("\(key) is not a table") }
                var result: [String: String] = [:]
                for pair in object.members {
                    guard case .string(let text) = pair.value else { throw fail("\(key).\(pair.key.prefix(40)) is not a string") }
                    result[pair.key] = text
                }
                return result
            }
            let list: (String) throws(UsageError) -> [String]? = { key throws(UsageError) in
                guard let value = entry[key] else { return nil }
                guard case .array(let elements) = value else { throw fail("\(key) is not an array") }
                return try elements.map { element throws(UsageError) in
                    guard case .string(let text) = element else { throw fail("\(key) holds something that is not a string") }
                    return text
                }
            }
            let seconds: (String) throws(UsageError) -> Duration? = { key throws(UsageError) in
                guard let value = entry[key] else { return nil }
                guard case .number(let number) = value, number.doubleValue > 0, number.doubleValue <= 86_400 else {
                    throw fail("\(key) is not a number of seconds between 0 and 86400")
                }
                return .milliseconds(Int64(number.doubleValue * 1_000))
            }
            let transport: MCPServerConfiguration.Transport
            switch (entry["command"], entry["url"]) {
            case (.string(let command)?, nil):
                transport = .stdio(command: command, arguments: try list("args") ?? [], environment: try strings("env"), workingDirectory: entry["cwd"]?.stringValue)
            case (nil, .string(let text)?):
                guard let url = URL(string: text) else { throw fail("url is not a URL") }
                var headers = try strings("http_headers")
                for (header, variable) in try strings("env_http_headers") {
                    if let value = environment[variable] { headers[header] = value }
                }
                var token: String?
                if let variable = entry["bearer_token_env_var"]?.stringValue {
                    guard let value = environment[variable], !value.isEmpty else { throw fail("the environment variable \(variable.prefix(60)) named by bearer_token_env_var is not set") }
                    token = value
                }
                transport = .streamableHTTP(url: url, headers: headers, bearerToken: token)
            default:
                throw fail("needs either command (stdio) or url (Streamable HTTP), as a string")
            }
            var configuration = MCPServerConfiguration(name: name, transport: transport)
            if let startup = try seconds("startup_timeout_sec") { configuration.connectTimeout = startup }
            if let tool = try seconds("tool_timeout_sec") { configuration.requestTimeout = tool }
            configuration.secrets = Array(try strings("env").values)
            servers.append(Server(configuration: configuration, enabledTools: try list("enabled_tools").map(Set.init), disabledTools: Set(try list("disabled_tools") ?? [])))
        }
        return (servers, warnings)
    }

    // MARK: - Running

    /// One client per server.
    func clients(logSink: any AgentLogSink) -> [(Server, MCPClient)] {
        servers.compactMap { server in (try? MCPClient(server.configuration, logSink: logSink)).map { (server, $0) } }
    }

    /// A provider per server for a runtime (each turn offers the server's current list, so a changed
    /// list reaches `chat`'s next turn), filtered by the server's entry; with `--mcp-trust`, every tool
    /// runs without approval. Each is asked once here, so a server that cannot start fails the command
    /// before a thread is made.
    static func providers(_ clients: [(Server, MCPClient)], trusted: Bool) async throws -> [any AgentToolProvider] {
        var providers: [any AgentToolProvider] = []
        for (server, client) in clients {
            let provider = filtered(server, client, trusted: trusted)
            _ = try await provider.currentTools()
            providers.append(provider)
        }
        return providers
    }

    private static func filtered(_ server: Server, _ client: MCPClient, trusted: Bool) -> Filtered {
        Filtered(server: server, client: client, provider: client.toolProvider(policy: trusted ? MCPToolPolicy(approvalPolicy: .automatic) : .hints))
    }

    /// A server's provider with its entry's `enabled_tools` and `disabled_tools` applied.
    private struct Filtered: AgentToolProvider {
        let server: Server
        let client: MCPClient
        let provider: MCPToolProvider

        func currentTools() async throws -> [AgentTool] {
            let tools = try await provider.currentTools()
            let listed = try await client.listTools().map(\.name)
            let names = MCPToolNaming.agentToolNames(server: server.configuration.name, tools: listed)
            let kept = Set(listed.filter { (server.enabledTools?.contains($0) ?? true) && !server.disabledTools.contains($0) }.compactMap { names[$0] })
            return tools.filter { kept.contains($0.definition.name) }
        }
    }

    /// The host tools of every server (connecting each), filtered by its entry; with `--mcp-trust`,
    /// every tool runs without approval.
    static func agentTools(_ clients: [(Server, MCPClient)], trusted: Bool) async throws -> [AgentTool] {
        var tools: [AgentTool] = []
        for (server, client) in clients { tools += try await filtered(server, client, trusted: trusted).currentTools() }
        return tools
    }
}
