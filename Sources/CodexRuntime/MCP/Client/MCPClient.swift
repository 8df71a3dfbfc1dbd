public import CodexCore
public import CodexSchema
import Synchronization

/// A client for one MCP server: it starts the server on first use, settles the protocol revision
/// (the stateless revision through `server/discover`, else the `initialize` handshake), lists the
/// server's tools page by page, and calls them with a timeout, cancellation and progress.
///
/// ```swift
/// let client = try MCPClient(MCPServerConfiguration(
///     name: "files", transport: .stdio(command: "python3", arguments: ["files_server.py"])
/// ))
/// let tools = try await client.listTools()
/// let result = try await client.callTool("read_file", arguments: ["path": "README.md"])
/// await client.shutdown()
/// ```
///
/// Every failure is an ``MCPError``. A server that crashes fails the requests it held with
/// `mcp_server_exited` and is started again on the next use. A server that breaks the protocol (a
/// message that is not JSON-RPC, a message over the size limit) is stopped. A request whose task is
/// cancelled, or that times out, is withdrawn with `notifications/cancelled`. Requests the server sends
/// (sampling, elicitation, roots) are refused with JSON-RPC's "method not found": this client declares
/// none of those capabilities. Call ``shutdown()`` when done: it ends the server process.
public final class MCPClient: Sendable {
    /// The server's configuration.
    public let configuration: MCPServerConfiguration
    /// Receives connection events and the server's standard error.
    let logSink: any AgentLogSink
    /// Measures timeouts.
    let clock: any Clock<Duration>
    /// The client's state: the live connection, a start in progress, the tool cache.
    let state = Mutex<State>(State())

    /// What ``state`` holds.
    struct State {
        var connection: MCPConnection?
        var description: MCPServerDescription?
        var connecting: Task<(MCPConnection, MCPServerDescription), any Error>?
        var closed = false
        var tools: (list: [MCPTool], generation: Int)?
        var toolGeneration = 0
        var toolChangeHandlers: [@Sendable () -> Void] = []
        var connectionsStarted = 0
    }

    /// Creates a client; nothing starts until the first request.
    ///
    /// - Parameters:
    ///   - configuration: The server.
    ///   - logSink: Receives connection events and the server's standard error (secrets redacted).
    ///   - clock: Measures timeouts (tests pass a manual clock).
    /// - Throws: ``MCPError`` `mcp_invalid_configuration`.
    public init(_ configuration: MCPServerConfiguration, logSink: any AgentLogSink = NoOpAgentLogSink(), clock: any Clock<Duration> = ContinuousClock()) throws(MCPError) {
        try configuration.validate()
        self.configuration = configuration
        self.logSink = logSink
        self.clock = clock
    }

    /// Ends the server when the last reference to the client goes (a runtime whose MCP tools held the
    /// client is gone): its process is stopped as ``shutdown()`` stops it, in the background.
    deinit {
        let (connection, connecting) = state.withLock { ($0.connection, $0.connecting) }
        connecting?.cancel()
        let closed = MCPError(code: .closed, message: "the client was released", server: configuration.name)
        if let connection { Task { await connection.close(closed) } }
    }

    /// The server's name.
    public var name: String { configuration.name }

    /// Connects (starting the server) unless connected, and returns what the server said about itself.
    ///
    /// - Throws: ``MCPError``: `mcp_spawn_failed`, `mcp_unsupported_protocol_version`, `mcp_timeout`,
    ///   `mcp_server_exited`, `mcp_closed`.
    @discardableResult
    public func connect() async throws -> MCPServerDescription {
        try await live().1
    }

    /// How many times a server process was started (1 after the first connection; a restart after a
    /// crash adds one).
    public var processStarts: Int { state.withLock { $0.connectionsStarted } }

    /// The most pages of `tools/list` read.
    static let maximumToolPages = 100
    /// The most tools read from one server.
    static let maximumTools = 10_000

    /// The descriptors the live stdio connection holds, for the tests that check none is left open.
    var processDescriptors: [Int32] {
        guard let connection = state.withLock({ $0.connection }), case .stdio(let process) = connection.link else { return [] }
        return process.descriptors
    }

    /// The live server process's ID, while one runs.
    var processIdentifier: Int32? { state.withLock { $0.connection?.processIdentifier } }

    /// The HTTP session the server issued, for a handshake session over Streamable HTTP.
    var sessionIdentifier: String? {
        guard let connection = state.withLock({ $0.connection }), case .http(let http) = connection.link else { return nil }
        return http.sessionID
    }

    /// Registers `handler`, called (on a reader thread) whenever the server announces that its tool list
    /// changed. The client's cached list is dropped first, so ``listTools()`` fetches the new one.
    public func onToolListChange(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.toolChangeHandlers.append(handler) }
    }

    /// The server's tools, every page (`tools/list` until no `nextCursor`), cached until the server
    /// announces a change.
    ///
    /// - Throws: ``MCPError``.
    public func listTools() async throws -> [MCPTool] {
        try await withSession { connection, description in try await self.listTools(on: connection, description) }
    }

    func listTools(on connection: MCPConnection, _ description: MCPServerDescription) async throws -> [MCPTool] {
        let generation = state.withLock { $0.toolGeneration }
        if let cached = state.withLock({ $0.tools }), cached.generation == generation { return cached.list }
        var tools: [MCPTool] = []
        var cursor: String?
        var pages = 0
        var seenCursors: Set<String> = []
        var seenNames: Set<String> = []
        repeat {
            var params = JSONObject()
            if let cursor { params["cursor"] = .string(cursor) }
            let result = try await request("tools/list", params, on: connection, era: description.era, timeout: configuration.requestTimeout)
            guard case .array(let entries)? = result["tools"] else {
                throw MCPError(code: .protocolViolation, message: "a tools/list result without a tools array", server: name)
            }
            // Checked before a page is read, the last (or only) page too: a single page of 100,000 tools
            // is refused as surely as 101 pages.
            guard tools.count + entries.count <= Self.maximumTools else {
                throw MCPError(
                    code: .protocolViolation, message: "tools/list lists more than \(Self.maximumTools) tools", server: name
                )
            }
            for entry in entries {
                var tool = try Self.naming(name) { () throws(MCPError) in try MCPTool(entry) }
                // Two tools of one name would reach the model as one name with two meanings.
                guard seenNames.insert(tool.name).inserted else {
                    throw MCPError(
                        code: .protocolViolation, message: "tools/list lists two tools named \(MCPToolNaming.printable(tool.name))", server: name
                    )
                }
                if case .http = connection.link, case .stateless = description.era {
                    guard let headers = MCPParameterHeaders.declared(in: tool.inputSchema) else {
                        connection.log(.warning, "mcp.tool.dropped", "a tool declares x-mcp-header arguments the specification does not allow", ["tool": MCPToolNaming.printable(tool.name)])
                        continue
                    }
                    tool.parameterHeaders = headers
                }
                tools.append(tool)
            }
            cursor = result["nextCursor"]?.stringValue
            pages += 1
            if let cursor {
                guard seenCursors.insert(cursor).inserted, pages < Self.maximumToolPages else {
                    throw MCPError(
                        code: .protocolViolation, message: "tools/list does not end within \(Self.maximumToolPages) pages and \(Self.maximumTools) tools (or a cursor repeated)",
                        server: name
                    )
                }
            }
        } while cursor != nil
        state.withLock { state in
            if state.toolGeneration == generation { state.tools = (tools, generation) }
        }
        return tools
    }

    /// Calls a tool.
    ///
    /// - Parameters:
    ///   - name: The tool's name on the server.
    ///   - arguments: Its arguments.
    ///   - progress: Called (on a reader thread, in order) with each progress notification; when given,
    ///     the request carries a progress token.
    /// - Returns: The result; a tool that reports a failure has ``MCPToolResult/isError`` set.
    /// - Throws: ``MCPError`` (`mcp_remote_error` when the server refused the call, `mcp_timeout`, …),
    ///   or `CancellationError` when the task was cancelled (the server is told).
    public func callTool(_ name: String, arguments: JSONObject = JSONObject(), progress: (@Sendable (MCPProgress) -> Void)? = nil) async throws -> MCPToolResult {
        guard let span = AgentSpan.current?.child("tools/call \(name)", kind: .client, attributes: [
            "mcp.method.name": "tools/call", "gen_ai.tool.name": .string(name), "gen_ai.operation.name": "execute_tool",
            "codexkit.mcp.server": .string(self.name),
        ]) else {
            return try await callToolOnce(name, arguments: arguments, progress: progress, span: nil)
        }
        do {
            let result = try await callToolOnce(name, arguments: arguments, progress: progress, span: span)
            if result.isError { span.recordFailure(code: "tool_error") } else { span.setStatus(.ok) }
            span.end()
            return result
        } catch {
            span.recordFailure(code: (error as? MCPError)?.code.rawValue ?? (error is CancellationError ? "cancelled" : "failed"))
            span.end()
            throw error
        }
    }

    private func callToolOnce(
        _ name: String, arguments: JSONObject, progress: (@Sendable (MCPProgress) -> Void)?, span: AgentSpan?
    ) async throws -> MCPToolResult {
        try await withSession { connection, description in
            if let span {
                if case .http = connection.link { span.setAttribute("network.transport", "tcp") } else { span.setAttribute("network.transport", "pipe") }
                span.setAttribute("mcp.protocol.version", .string(description.era.version))
            }
            var headers: [String: String] = [:]
            if case .http = connection.link, case .stateless = description.era {
                let tools = try await self.listTools(on: connection, description)
                headers = MCPParameterHeaders.values(tools.first { $0.name == name }?.parameterHeaders ?? [], arguments: arguments)
            }
            var params = JSONObject()
            params["name"] = .string(name)
            params["arguments"] = .object(arguments)
            let result = try await self.request(
                "tools/call", params, on: connection, era: description.era, timeout: self.configuration.requestTimeout, progress: progress, parameterHeaders: headers
            )
            return try Self.naming(self.name) { () throws(MCPError) in try MCPToolResult(result) }
        }
    }

    /// Runs `body` on the live connection; when the server ended the HTTP session, once more on a new one
    /// (the server refused the request with the 404, so it did not run).
    func withSession<T>(_ body: (MCPConnection, MCPServerDescription) async throws -> T) async throws -> T {
        let (connection, description) = try await live()
        do {
            return try await body(connection, description)
        } catch let error as MCPError where error.code == .sessionExpired {
            connection.log(.info, "mcp.http.session_restarted", "the server ended the session; starting a new one")
            let (fresh, freshDescription) = try await live()
            return try await body(fresh, freshDescription)
        }
    }

    /// Checks that the server answers (`ping` on a handshake connection; `server/discover` on a
    /// stateless one, which has no `ping`).
    ///
    /// - Throws: ``MCPError``.
    public func ping() async throws {
        try await withSession { connection, description in
            let method = if case .handshake = description.era { "ping" } else { "server/discover" }
            _ = try await self.request(method, JSONObject(), on: connection, era: description.era, timeout: self.configuration.requestTimeout)
        }
    }

    /// Ends the server process and refuses every later request with `mcp_closed`. Requests in flight
    /// fail with `mcp_closed`.
    public func shutdown() async {
        let (connection, connecting) = state.withLock { state -> (MCPConnection?, Task<(MCPConnection, MCPServerDescription), any Error>?) in
            state.closed = true
            defer {
                state.connection = nil
                state.connecting = nil
            }
            return (state.connection, state.connecting)
        }
        connecting?.cancel()
        if let connecting, case .success(let (started, _)) = await connecting.result { await started.close(closedError) }
        await connection?.close(closedError)
    }

    /// The error of every request after ``shutdown()``.
    var closedError: MCPError { MCPError(code: .closed, message: "the client was shut down", server: name) }

    /// `body`'s error, naming the server.
    static func naming<T>(_ server: String, _ body: () throws(MCPError) -> T) throws(MCPError) -> T {
        do { return try body() } catch { throw error.naming(server) }
    }
}
