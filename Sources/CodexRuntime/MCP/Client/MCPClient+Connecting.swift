import CodexCore
import CodexSchema
import Synchronization

extension MCPClient {
    /// The live connection, started (or restarted after it ended) when needed; concurrent callers share
    /// one start, and a caller whose task is cancelled stops waiting for it (the start goes on for the
    /// others, and installs its connection itself: see ``establishAndInstall()``).
    func live() async throws -> (MCPConnection, MCPServerDescription) {
        enum Next {
            case ready(MCPConnection, MCPServerDescription)
            case wait(Task<(MCPConnection, MCPServerDescription), any Error>)
        }
        let next = try state.withLock { state throws(MCPError) -> Next in
            guard !state.closed else { throw closedError }
            if let connection = state.connection, connection.endedError == nil, let description = state.description {
                return .ready(connection, description)
            }
            if let connecting = state.connecting { return .wait(connecting) }
            let connecting = Task { try await self.establishAndInstall() }
            state.connecting = connecting
            return .wait(connecting)
        }
        switch next {
        case .ready(let connection, let description): return (connection, description)
        case .wait(let task): return try await MCPTaskWait.result(of: task).get()
        }
    }

    /// Starts the server (``establish()``) and, whoever still waits for it, ends the start in the
    /// client's state: the start is cleared (a later caller starts afresh after a failure), a live
    /// connection newer than the current one becomes the client's (so ``shutdown()`` and `deinit` end
    /// it), and one that arrives after ``shutdown()`` is closed at once.
    func establishAndInstall() async throws -> (MCPConnection, MCPServerDescription) {
        let outcome: Result<(MCPConnection, MCPServerDescription), any Error>
        do {
            outcome = .success(try await establish())
        } catch {
            outcome = .failure(error)
        }
        // A connection another one replaced is closed in the background (the client lives on); one that
        // arrived after shutdown is closed before this returns, so shutdown (which waits for this start)
        // returns only once its server has ended.
        var superseded: MCPConnection?
        var refused: MCPConnection?
        let installed = state.withLock { state -> Result<(MCPConnection, MCPServerDescription), any Error> in
            // One start at a time: a new one is made only once this one is cleared, or never after shutdown.
            state.connecting = nil
            guard case .success(let (connection, description)) = outcome else { return outcome }
            if state.closed {
                refused = connection
                return .failure(closedError)
            }
            // Only a newer connection that is still live replaces the current one.
            if connection.endedError == nil, state.connection.map({ $0.generation < connection.generation }) ?? true {
                if let current = state.connection, current !== connection { superseded = current }
                state.connection = connection
                state.description = description
            }
            return .success((connection, description))
        }
        if let refused { await refused.close(closedError) }
        if let superseded { Task { await superseded.close(MCPError(code: .closed, message: "a newer connection replaced it", server: name)) } }
        return try installed.get()
    }

    /// Starts a connection (a process for stdio).
    func start() throws(MCPError) -> MCPConnection {
        let generation = state.withLock { state -> Int in
            state.connectionsStarted += 1
            return state.connectionsStarted
        }
        return try MCPConnection(configuration: configuration, generation: generation, logSink: logSink, clock: clock) { [weak self] in self?.toolsChanged() }
    }

    /// Drops the cached tool list and tells the handlers.
    func toolsChanged() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            state.toolGeneration += 1
            state.tools = nil
            return state.toolChangeHandlers
        }
        for handler in handlers { handler() }
    }

    /// Starts the server and settles the revision (see ``negotiate(_:)``); whatever fails (or is
    /// cancelled, by ``shutdown()``), the connection it started is closed.
    func establish() async throws -> (MCPConnection, MCPServerDescription) {
        var connection = try start()
        do {
            return try await negotiate(&connection)
        } catch {
            await connection.close((error as? MCPError) ?? closedError)
            throw error
        }
    }

    /// A `server/discover` probe in the stateless revision: a server that answers it is stateless. A
    /// server that refuses it with anything but a stateless error (or with an unsupported-version error
    /// listing a handshake revision) is a handshake server, sent `initialize` on the same connection;
    /// one that does not answer in time or exits is started again before `initialize` (some servers exit
    /// on the probe, and a slow one would otherwise settle on the stateless revision after the client
    /// moved on).
    private func negotiate(_ connection: inout MCPConnection) async throws -> (MCPConnection, MCPServerDescription) {
        if configuration.revisions == .handshakeOnly { return try await handshake(on: connection) }
        do {
            let era = MCPSessionEra.stateless(version: MCPProtocolRevision.stateless)
            let result = try await request("server/discover", JSONObject(), on: connection, era: era, timeout: configuration.connectTimeout)
            let versions = result["supportedVersions"]?.arrayValue?.compactMap(\.stringValue) ?? []
            guard versions.contains(MCPProtocolRevision.stateless) else { throw unsupported(versions) }
            let serverInfo = result["_meta"]?["io.modelcontextprotocol/serverInfo"]
            let description = MCPServerDescription(
                era: era, name: serverInfo?["name"]?.stringValue, version: serverInfo?["version"]?.stringValue,
                capabilities: result["capabilities"] ?? .object(JSONObject()), instructions: result["instructions"]?.stringValue
            )
            connection.negotiated(era)
            connection.log(.info, "mcp.server.connected", "stateless revision \(MCPProtocolRevision.stateless)")
            if description.announcesToolListChanges { listenForToolChanges(on: connection, era: era) }
            return (connection, description)
        } catch let error as MCPError where error.code == .remoteError && Self.isStatelessRefusal(error.rpcCode) {
            let supported = error.remoteData?["supported"]?.arrayValue?.compactMap(\.stringValue) ?? []
            guard error.rpcCode == MCPRemoteError.unsupportedProtocolVersion, configuration.revisions == .automatic,
                  supported.contains(where: MCPProtocolRevision.handshake.contains)
            else {
                throw MCPError(
                    code: .unsupportedProtocolVersion, message: "the server speaks only revisions this client does not", server: name, rpcCode: error.rpcCode,
                    underlying: error
                )
            }
            connection.log(.debug, "mcp.server.probe_refused", "the server offers only handshake revisions")
        } catch let error as MCPError where configuration.revisions == .statelessOnly {
            throw MCPError(code: .unsupportedProtocolVersion, message: "the server did not answer the stateless probe", server: name, rpcCode: error.rpcCode, underlying: error)
        } catch let error as MCPError where [.timeout, .serverExited, .malformedMessage, .messageTooLarge].contains(error.code) {
            await connection.close(error)
            connection = try start()
        } catch let error as MCPError where ![.closed, .spawnFailed, .unauthorized, .unsupportedProtocolVersion].contains(error.code) {
            // Any other refusal: a handshake server. Go on with `initialize` on this connection.
            connection.log(.debug, "mcp.server.probe_refused", "the stateless probe was refused; trying the handshake", ["code": error.code.rawValue])
        }
        return try await handshake(on: connection)
    }

    /// `initialize` with the newest handshake revision, the server's answer checked, then
    /// `notifications/initialized`.
    private func handshake(on connection: MCPConnection) async throws -> (MCPConnection, MCPServerDescription) {
        var params = JSONObject()
        params["protocolVersion"] = .string(MCPProtocolRevision.handshake[0])
        params["capabilities"] = .object(JSONObject())
        params["clientInfo"] = Self.clientInfo
        let result = try await request("initialize", params, on: connection, era: nil, timeout: configuration.connectTimeout, cancellable: false)
        guard let version = result["protocolVersion"]?.stringValue else {
            throw MCPError(code: .protocolViolation, message: "an initialize result without protocolVersion", server: name)
        }
        guard MCPProtocolRevision.handshake.contains(version) else { throw unsupported([version]) }
        let era = MCPSessionEra.handshake(version: version)
        try await connection.send(.notification(method: "notifications/initialized", params: nil), era: era)
        // Only now may the server send its own requests (and the HTTP GET stream open).
        connection.negotiated(era)
        connection.log(.info, "mcp.server.connected", "handshake revision \(version)")
        let description = MCPServerDescription(
            era: era, name: result["serverInfo"]?["name"]?.stringValue, version: result["serverInfo"]?["version"]?.stringValue,
            capabilities: result["capabilities"] ?? .object(JSONObject()), instructions: result["instructions"]?.stringValue
        )
        return (connection, description)
    }

    /// On a stateless connection, tool-list changes arrive only on a `subscriptions/listen` stream:
    /// open one that lives as long as the connection (a stream that ends is not opened again; the tool
    /// list is then fetched again only after the connection is).
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
}
