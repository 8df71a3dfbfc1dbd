import CodexCore
import CodexSchema
import Synchronization

/// One live link to a server (one process for stdio): its outstanding requests, what the server
/// sends, and how the link ended. A crashed server's connection is dropped; the client starts another.
final class MCPConnection: Sendable {
    /// The server's name, for errors and logs.
    let server: String
    /// The process.
    let process: MCPStdioProcess
    private let inbox: Inbox

    /// What the reader threads share with the connection.
    private final class Inbox: Sendable {
        struct State {
            var table = MCPRequestTable<MCPReplyWaiter>()
            var ended: MCPError?
        }

        let server: String
        let maximumMessageBytes: Int
        let logSink: any AgentLogSink
        let redactor: SecretRedactor
        let toolsChanged: @Sendable () -> Void
        let state = Mutex<State>(State())
        /// The process, once started (replies to server requests go through it).
        let process = Mutex<MCPStdioProcess?>(nil)

        init(server: String, maximumMessageBytes: Int, logSink: any AgentLogSink, redactor: SecretRedactor, toolsChanged: @escaping @Sendable () -> Void) {
            self.server = server
            self.maximumMessageBytes = maximumMessageBytes
            self.logSink = logSink
            self.redactor = redactor
            self.toolsChanged = toolsChanged
        }

        func receive(_ line: [UInt8]) {
            let messages: [MCPMessage]
            do {
                messages = try MCPMessage.decode(line, maximumBytes: maximumMessageBytes)
            } catch {
                end(error.naming(server), stop: true)
                return
            }
            for message in messages { act(on: message) }
        }

        private func act(on message: MCPMessage) {
            let action = state.withLock { $0.table.receive(message) }
            switch action {
            case .complete(let entry, .success(let value)):
                entry.waiter.finish(.success(value))
            case .complete(let entry, .failure(let remote)):
                entry.waiter.finish(.failure(MCPError(
                    code: .remoteError, message: "the server answered \(entry.method) with an error", server: server, rpcCode: remote.code,
                    remoteMessage: String(remote.message.prefix(1_000))
                )))
            case .progress(let entry, let progress):
                entry.waiter.progress?(progress)
            case .toolsChanged:
                toolsChanged()
            case .reply(let reply):
                guard let process = process.withLock({ $0 }) else { return }
                Task { try? await process.send(reply.encoded()) }
            case .log(let level, let text):
                log(.debug, "mcp.server.log", redactor.redact(String(text.prefix(4_096))), ["level": level])
            case .unattributedError(let remote):
                log(.warning, "mcp.server.error_without_id", "the server could not read a message the client sent", ["rpc_code": String(remote.code)])
            case .ignore:
                break
            }
        }

        /// Ends the connection: every waiting request fails with `error`; with `stop`, the process is
        /// ended too (it broke the protocol).
        func end(_ error: MCPError, stop: Bool) {
            let drained = state.withLock { state -> [MCPRequestTable<MCPReplyWaiter>.Entry] in
                guard state.ended == nil else { return [] }
                state.ended = error
                return state.table.drain()
            }
            for entry in drained { entry.waiter.finish(.failure(error)) }
            if stop, let process = process.withLock({ $0 }) {
                if error.code == .serverExited {
                    log(.notice, "mcp.server.exited", "the server closed its output", [:])
                } else {
                    log(.warning, "mcp.server.stopped", "the server broke the protocol and was stopped", ["code": error.code.rawValue])
                }
                Task { await process.terminate(grace: .milliseconds(200)) }
            }
        }

        func stderr(_ line: String) {
            log(.info, "mcp.server.stderr", redactor.redact(line), [:])
        }

        func log(_ level: AgentLogLevel, _ name: String, _ message: String, _ metadata: [String: String]) {
            var metadata = metadata
            metadata["server"] = server
            logSink.record(AgentLogEvent(level: level, category: .mcp, name: name, message: message, metadata: metadata))
        }
    }

    /// Starts the server process.
    ///
    /// - Throws: ``MCPError`` `mcp_spawn_failed`.
    init(
        configuration: MCPServerConfiguration, logSink: any AgentLogSink, toolsChanged: @escaping @Sendable () -> Void
    ) throws(MCPError) {
        server = configuration.name
        switch configuration.transport {
        case .stdio(let command, let arguments, let environment, let directory):
            let redactor = SecretRedactor(secrets: configuration.secrets + Array(environment.values))
            let inbox = Inbox(
                server: configuration.name, maximumMessageBytes: configuration.maximumMessageBytes, logSink: logSink, redactor: redactor,
                toolsChanged: toolsChanged
            )
            let callbacks = MCPStdioProcess.Callbacks(
                line: { inbox.receive($0) },
                ended: { error in inbox.end(error.naming(configuration.name), stop: true) },
                stderr: { inbox.stderr($0) }
            )
            let started: MCPStdioProcess
            do {
                started = try MCPStdioProcess(
                    command: command, arguments: arguments, environment: configuration.childEnvironment(environment), directory: directory,
                    maximumMessageBytes: configuration.maximumMessageBytes, callbacks: callbacks
                )
            } catch {
                throw error.naming(configuration.name)
            }
            inbox.process.withLock { $0 = started }
            process = started
            self.inbox = inbox
            inbox.log(.info, "mcp.server.started", "started \(MCPStdioProcess.displayName(command))", ["pid": String(started.pid)])
        }
    }

    /// Why the connection ended, or nil while it is live.
    var endedError: MCPError? { inbox.state.withLock { $0.ended } }

    /// Registers a request, or returns nil when the connection has ended.
    func open(method: String, waiter: MCPReplyWaiter) -> MCPRequestTable<MCPReplyWaiter>.Entry? {
        inbox.state.withLock { state in
            guard state.ended == nil else { return nil }
            return state.table.open(method: method, wantsProgress: waiter.progress != nil, waiter: waiter)
        }
    }

    /// Removes a request that will not be answered (cancelled, timed out, or never sent).
    func remove(_ id: Int64) -> MCPRequestTable<MCPReplyWaiter>.Entry? {
        inbox.state.withLock { $0.table.remove(id) }
    }

    /// Writes a message.
    func send(_ message: MCPMessage) async throws(MCPError) {
        do {
            try await process.send(message.encoded())
        } catch {
            throw error.naming(server)
        }
    }

    /// Ends the connection (requests fail with `error`) and the process.
    func close(_ error: MCPError) async {
        inbox.end(error, stop: false)
        await process.terminate()
    }

    /// Records a log event naming the server.
    func log(_ level: AgentLogLevel, _ name: String, _ message: String, _ metadata: [String: String] = [:]) {
        inbox.log(level, name, message, metadata)
    }
}
