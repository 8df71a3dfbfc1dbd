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
    private let clock: any Clock<Duration>
    private let state = Mutex<State>(State())

    private struct State {
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

    private func listTools(on connection: MCPConnection, _ description: MCPServerDescription) async throws -> [MCPTool] {
        let generation = state.withLock { $0.toolGeneration }
        if let cached = state.withLock({ $0.tools }), cached.generation == generation { return cached.list }
        var tools: [MCPTool] = []
        var cursor: String?
        var pages = 0
        var seenCursors: Set<String> = []
        repeat {
            var params = JSONObject()
            if let cursor { params["cursor"] = .string(cursor) }
            let result = try await request("tools/list", params, on: connection, era: description.era, timeout: configuration.requestTimeout)
            guard case .array(let entries)? = result["tools"] else {
                throw MCPError(code: .protocolViolation, message: "a tools/list result without a tools array", server: name)
            }
            for entry in entries {
                var tool = try Self.naming(name) { () throws(MCPError) in try MCPTool(entry) }
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
                guard seenCursors.insert(cursor).inserted, pages < 1_000, tools.count <= 100_000 else {
                    throw MCPError(code: .protocolViolation, message: "tools/list pagination does not end (a cursor repeated, or over 1,000 pages)", server: name)
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
        try await withSession { connection, description in
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
    private func withSession<T>(_ body: (MCPConnection, MCPServerDescription) async throws -> T) async throws -> T {
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

    private var closedError: MCPError { MCPError(code: .closed, message: "the client was shut down", server: name) }

    // MARK: - Connecting

    /// The live connection, started (or restarted after a crash) when needed; concurrent callers share
    /// one start.
    private func live() async throws -> (MCPConnection, MCPServerDescription) {
        let task = try state.withLock { state throws(MCPError) -> Task<(MCPConnection, MCPServerDescription), any Error> in
            guard !state.closed else { throw closedError }
            if let connection = state.connection, connection.endedError == nil, let description = state.description {
                return Task { (connection, description) }
            }
            if let connecting = state.connecting { return connecting }
            let connecting = Task { try await self.establish() }
            state.connecting = connecting
            return connecting
        }
        let result = await task.result
        return try state.withLock { state throws -> (MCPConnection, MCPServerDescription) in
            if state.connecting == task { state.connecting = nil }
            let (connection, description) = try result.get()
            if state.closed {
                Task { await connection.close(closedError) }
                throw closedError
            }
            if state.connection !== connection {
                state.connection = connection
                state.description = description
            }
            return (connection, description)
        }
    }

    private func start() throws(MCPError) -> MCPConnection {
        let connection = try MCPConnection(configuration: configuration, logSink: logSink, clock: clock) { [weak self] in self?.toolsChanged() }
        state.withLock { $0.connectionsStarted += 1 }
        return connection
    }

    private func toolsChanged() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            state.toolGeneration += 1
            state.tools = nil
            return state.toolChangeHandlers
        }
        for handler in handlers { handler() }
    }

    /// Starts the server and settles the revision: a `server/discover` probe in the stateless revision;
    /// a server that answers it is stateless. A server that refuses it with anything but a stateless
    /// error is a handshake server, sent `initialize` on the same process; one that does not answer in
    /// time or exits is started again before `initialize` (some servers exit on the probe, and a slow
    /// one would otherwise settle on the stateless revision after the client moved on).
    private func establish() async throws -> (MCPConnection, MCPServerDescription) {
        var connection = try start()
        if configuration.revisions == .handshakeOnly { return try await handshake(on: connection) }
        do {
            let result = try await request("server/discover", JSONObject(), on: connection, era: .stateless(version: MCPProtocolRevision.stateless), timeout: configuration.connectTimeout)
            let versions = result["supportedVersions"]?.arrayValue?.compactMap(\.stringValue) ?? []
            guard versions.contains(MCPProtocolRevision.stateless) else {
                await connection.close(unsupported(versions))
                throw unsupported(versions)
            }
            let description = MCPServerDescription(
                era: .stateless(version: MCPProtocolRevision.stateless), name: result["_meta"]?["io.modelcontextprotocol/serverInfo"]?["name"]?.stringValue,
                version: result["_meta"]?["io.modelcontextprotocol/serverInfo"]?["version"]?.stringValue,
                capabilities: result["capabilities"] ?? .object(JSONObject()), instructions: result["instructions"]?.stringValue
            )
            connection.negotiated(description.era)
            connection.log(.info, "mcp.server.connected", "stateless revision \(MCPProtocolRevision.stateless)")
            if description.announcesToolListChanges { listenForToolChanges(on: connection, era: description.era) }
            return (connection, description)
        } catch let error as MCPError where error.code == .remoteError && Self.isStatelessRefusal(error.rpcCode) {
            await connection.close(error)
            throw MCPError(code: .unsupportedProtocolVersion, message: "the server speaks only revisions this client does not", server: name, rpcCode: error.rpcCode, underlying: error)
        } catch let error as MCPError where configuration.revisions == .statelessOnly {
            await connection.close(error)
            throw MCPError(code: .unsupportedProtocolVersion, message: "the server did not answer the stateless probe", server: name, rpcCode: error.rpcCode, underlying: error)
        } catch let error as MCPError where error.code == .timeout || error.code == .serverExited || error.code == .malformedMessage || error.code == .messageTooLarge {
            // The server may have exited, or may settle on the stateless revision when its late answer
            // arrives: start it again before the handshake.
            await connection.close(error)
            connection = try start()
        } catch let error as MCPError where error.code != .closed && error.code != .spawnFailed && error.code != .unauthorized {
            // Any other refusal: a handshake server. Go on with `initialize` on this connection.
            connection.log(.debug, "mcp.server.probe_refused", "the stateless probe was refused; trying the handshake", ["code": error.code.rawValue])
        }
        return try await handshake(on: connection)
    }

    private func handshake(on connection: MCPConnection) async throws -> (MCPConnection, MCPServerDescription) {
        var params = JSONObject()
        params["protocolVersion"] = .string(MCPProtocolRevision.handshake[0])
        params["capabilities"] = .object(JSONObject())
        params["clientInfo"] = Self.clientInfo
        let result: JSONValue
        do {
            result = try await request("initialize", params, on: connection, era: nil, timeout: configuration.connectTimeout, cancellable: false)
        } catch {
            await connection.close((error as? MCPError) ?? closedError)
            throw error
        }
        guard let version = result["protocolVersion"]?.stringValue else {
            let error = MCPError(code: .protocolViolation, message: "an initialize result without protocolVersion", server: name)
            await connection.close(error)
            throw error
        }
        guard MCPProtocolRevision.handshake.contains(version) else {
            let error = unsupported([version])
            await connection.close(error)
            throw error
        }
        connection.negotiated(.handshake(version: version))
        try await connection.send(.notification(method: "notifications/initialized", params: nil), era: .handshake(version: version))
        connection.log(.info, "mcp.server.connected", "handshake revision \(version)")
        let description = MCPServerDescription(
            era: .handshake(version: version), name: result["serverInfo"]?["name"]?.stringValue, version: result["serverInfo"]?["version"]?.stringValue,
            capabilities: result["capabilities"] ?? .object(JSONObject()), instructions: result["instructions"]?.stringValue
        )
        return (connection, description)
    }

    /// On a stateless connection, tool-list changes arrive only on a `subscriptions/listen` stream:
    /// open one that lives as long as the connection.
    private func listenForToolChanges(on connection: MCPConnection, era: MCPSessionEra) {
        let waiter = MCPReplyWaiter(progress: nil)
        guard let entry = connection.open(method: "subscriptions/listen", waiter: waiter) else { return }
        var params = JSONObject()
        params["notifications"] = .object(JSONObject([("toolsListChanged", .bool(true))]))
        let message = MCPMessage.request(id: .number(entry.id), method: "subscriptions/listen", params: .object(Self.stamped(params, era: era, progressToken: nil)))
        Task {
            do {
                try await connection.send(message, era: era)
            } catch {
                _ = connection.remove(entry.id)
            }
        }
    }

    private func unsupported(_ versions: [String]) -> MCPError {
        MCPError(
            code: .unsupportedProtocolVersion,
            message: "the server offers \(versions.prefix(8).map { String($0.prefix(32)) }.joined(separator: ", ")); this client speaks \(([MCPProtocolRevision.stateless] + MCPProtocolRevision.handshake).joined(separator: ", "))",
            server: name
        )
    }

    /// The errors only a stateless server sends (header mismatch, missing capability, unsupported version).
    private static func isStatelessRefusal(_ code: Int?) -> Bool {
        code == MCPRemoteError.unsupportedProtocolVersion || code == MCPRemoteError.missingRequiredClientCapability || code == MCPRemoteError.headerMismatch
    }

    // MARK: - Requests

    /// Sends one request and waits for its reply, within `timeout`; a cancelled or expired request is
    /// withdrawn with `notifications/cancelled` (unless `cancellable` is false: `initialize` must not be).
    private func request(
        _ method: String, _ params: JSONObject, on connection: MCPConnection, era: MCPSessionEra?, timeout: Duration,
        progress: (@Sendable (MCPProgress) -> Void)? = nil, cancellable: Bool = true, parameterHeaders: [String: String] = [:]
    ) async throws -> JSONValue {
        let waiter = MCPReplyWaiter(progress: progress)
        guard let entry = connection.open(method: method, waiter: waiter) else {
            throw connection.endedError ?? closedError
        }
        let message = MCPMessage.request(id: .number(entry.id), method: method, params: .object(Self.stamped(params, era: era, progressToken: entry.progressToken)))
        let clock = self.clock
        let id = entry.id
        let timer = Task {
            try await clock.sleepInSlices(for: timeout)
            self.withdraw(id, on: connection, because: MCPError(code: .timeout, message: "\(method) had no reply within \(timeout)", server: self.name), notify: cancellable)
        }
        defer { timer.cancel() }
        let result = try await withTaskCancellationHandler {
            do {
                try await connection.send(message, era: era, parameterHeaders: parameterHeaders)
            } catch {
                _ = connection.remove(id)
                throw error
            }
            return try await waiter.wait()
        } onCancel: {
            self.withdraw(id, on: connection, because: CancellationError(), notify: cancellable)
        }
        return try Self.checkResultType(result, method: method, server: name)
    }

    /// Fails a request that will not be answered and, when `notify`, tells the server.
    private func withdraw(_ id: Int64, on connection: MCPConnection, because error: any Error, notify: Bool) {
        guard let entry = connection.remove(id) else { return }
        entry.waiter.finish(.failure(error))
        guard notify, !connection.cancelsByClosingStreams else { return }
        var params = JSONObject()
        params["requestId"] = .number(JSONNumber(id))
        params["reason"] = .string(error is CancellationError ? "The client cancelled the request." : "The request timed out.")
        let era = state.withLock { $0.description?.era }
        Task { try? await connection.send(.notification(method: "notifications/cancelled", params: .object(params)), era: era) }
    }

    /// The request's params with the envelope of `era` in `_meta` (the stateless revision's version,
    /// capabilities and client info) and the progress token.
    static func stamped(_ params: JSONObject, era: MCPSessionEra?, progressToken: String?) -> JSONObject {
        var meta = params["_meta"]?.objectValue ?? JSONObject()
        if case .stateless(let version)? = era {
            meta["io.modelcontextprotocol/protocolVersion"] = .string(version)
            meta["io.modelcontextprotocol/clientCapabilities"] = .object(JSONObject())
            meta["io.modelcontextprotocol/clientInfo"] = clientInfo
        }
        if let progressToken { meta["progressToken"] = .string(progressToken) }
        var stamped = params
        if !meta.isEmpty { stamped["_meta"] = .object(meta) }
        return stamped
    }

    /// `{"name": "codexkit", "version": …}`.
    static var clientInfo: JSONValue {
        .object(JSONObject([("name", .string("codexkit")), ("version", .string(CodexKitVersion.current))]))
    }

    /// A stateless result names its `resultType`; a missing one means `complete` (older servers). This
    /// client declares no capability a server could ask for input through, so anything else is a
    /// protocol violation.
    private static func checkResultType(_ result: JSONValue, method: String, server: String) throws(MCPError) -> JSONValue {
        guard case .object = result else { throw MCPError(code: .protocolViolation, message: "the \(method) result is not an object", server: server) }
        switch result["resultType"] {
        case nil, .string("complete")?: return result
        case .string("input_required")?:
            throw MCPError(code: .protocolViolation, message: "the server asked for input on \(method), which this client does not offer", server: server)
        default:
            throw MCPError(code: .protocolViolation, message: "the \(method) result has an unknown resultType", server: server)
        }
    }

    private static func naming<T>(_ server: String, _ body: () throws(MCPError) -> T) throws(MCPError) -> T {
        do { return try body() } catch { throw error.naming(server) }
    }
}
