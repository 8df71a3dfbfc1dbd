import CodexCore
import CodexSchema
import CodexTransport
import Foundation
import Synchronization

/// One live link to a server (a process for stdio, a session for Streamable HTTP): its outstanding
/// requests, what the server sends, and how the link ended. An ended connection is dropped; the client
/// starts another on the next use.
final class MCPConnection: Sendable {
    /// How messages travel.
    enum Link: Sendable {
        /// A child process.
        case stdio(MCPStdioProcess)
        /// A Streamable HTTP endpoint.
        case http(MCPHTTPLink)
    }

    /// The server's name, for errors and logs.
    let server: String
    /// Which start of the client made it (1, 2, …): a newer connection replaces an older one.
    let generation: Int
    /// The link.
    let link: Link
    private let inbox: Inbox

    /// What the reader threads and streams share with the connection.
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
        /// Whether the stateless revision was settled (its servers send no requests, and get no replies).
        let stateless = Mutex(false)
        /// Replies to server requests being written; more than ``maximumReplies`` at once are dropped.
        let replying = Mutex(0)
        /// The most replies to server requests written at once.
        static let maximumReplies = 16
        /// Sends the client's answers to server requests, and stops the link after a protocol break (behind a
        /// reference: see ``SendableReference``, read on every server request).
        let replier = Mutex<SendableReference<(send: @Sendable (MCPMessage) async -> Void, stop: @Sendable () async -> Void)>?>(nil)

        init(server: String, maximumMessageBytes: Int, logSink: any AgentLogSink, redactor: SecretRedactor, toolsChanged: @escaping @Sendable () -> Void) {
            self.server = server
            self.maximumMessageBytes = maximumMessageBytes
            self.logSink = logSink
            self.redactor = redactor
            self.toolsChanged = toolsChanged
        }

        func receive(_ bytes: [UInt8]) {
            let messages: [MCPMessage]
            do {
                messages = try MCPMessage.decode(bytes, maximumBytes: maximumMessageBytes)
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
                var error = MCPError(
                    code: .remoteError, message: "the server answered \(entry.method) with an error", server: server, rpcCode: remote.code,
                    remoteMessage: String(remote.message.prefix(1_000))
                )
                if let data = remote.data, data.compactBytes().count <= 65_536 { error.remoteData = data }
                entry.waiter.finish(.failure(error))
            case .progress(let entry, let progress):
                entry.waiter.progress?(progress)
            case .toolsChanged:
                toolsChanged()
            case .reply(let reply):
                // A stateless server sends no requests and takes no replies; a flood of requests gets at
                // most a few replies in flight (the rest are dropped), so memory stays bounded.
                guard !stateless.withLock({ $0 }), let replier = replier.withLock({ $0 })?.value else { return }
                let admitted = replying.withLock { count -> Bool in
                    guard count < Self.maximumReplies else { return false }
                    count += 1
                    return true
                }
                guard admitted else {
                    log(.warning, "mcp.server.request_dropped", "the server sent more requests than the client answers at once", [:])
                    return
                }
                Task {
                    await replier.send(reply)
                    replying.withLock { $0 -= 1 }
                }
            case .log(let level, let text):
                log(.debug, "mcp.server.log", redactor.redact(String(text.prefix(4_096))), ["level": level])
            case .unattributedError(let remote):
                log(.warning, "mcp.server.error_without_id", "the server could not read a message the client sent", ["rpc_code": String(remote.code)])
            case .ignore:
                break
            }
        }

        /// Whether request `id` still waits for its reply.
        func isPending(_ id: Int64) -> Bool { state.withLock { $0.table.contains(id) } }

        /// Fails one request (its reply will not come), unless it was answered.
        func fail(_ id: Int64, _ error: MCPError) {
            let entry = state.withLock { $0.table.remove(id) }
            entry?.waiter.finish(.failure(error.naming(server)))
        }

        /// Ends the connection: every waiting request fails with `error`; with `stop`, the link is
        /// stopped too (the process ended, the session closed).
        func end(_ error: MCPError, stop: Bool) {
            let drained = state.withLock { state -> [MCPRequestTable<MCPReplyWaiter>.Entry]? in
                guard state.ended == nil else { return nil }
                state.ended = error
                return state.table.drain()
            }
            guard let drained else { return }
            for entry in drained { entry.waiter.finish(.failure(error)) }
            guard stop, let replier = replier.withLock({ $0 })?.value else { return }
            switch error.code {
            case .serverExited: log(.notice, "mcp.server.exited", "the server closed its output", [:])
            case .sessionExpired, .closed: break
            default: log(.warning, "mcp.server.stopped", "the server broke the protocol and was stopped", ["code": error.code.rawValue])
            }
            Task { await replier.stop() }
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

    /// Starts the server process, or prepares the HTTP session (nothing is sent yet).
    ///
    /// - Throws: ``MCPError`` `mcp_spawn_failed`.
    init(
        configuration: MCPServerConfiguration, generation: Int, logSink: any AgentLogSink, clock: any Clock<Duration>, toolsChanged: @escaping @Sendable () -> Void
    ) throws(MCPError) {
        server = configuration.name
        self.generation = generation
        let name = configuration.name
        switch configuration.transport {
        case .stdio(let command, let arguments, let environment, let directory):
            let inbox = Inbox(
                server: name, maximumMessageBytes: configuration.maximumMessageBytes, logSink: logSink,
                redactor: SecretRedactor(secrets: configuration.secrets + Array(environment.values) + Self.secretCandidates(arguments)), toolsChanged: toolsChanged
            )
            let callbacks = MCPStdioProcess.Callbacks(
                line: { inbox.receive($0) },
                ended: { error in inbox.end(error.naming(name), stop: true) },
                stderr: { inbox.stderr($0) }
            )
            let process: MCPStdioProcess
            do {
                process = try MCPStdioProcess(
                    command: command, arguments: arguments, environment: configuration.childEnvironment(environment), directory: directory,
                    maximumMessageBytes: configuration.maximumMessageBytes, callbacks: callbacks
                )
            } catch {
                throw error.naming(name)
            }
            inbox.replier.withLock {
                $0 = SendableReference((send: { message in try? await process.send(message.encoded()) }, stop: { await process.terminate(grace: .milliseconds(200)) }))
            }
            link = .stdio(process)
            self.inbox = inbox
            inbox.log(.info, "mcp.server.started", "started \(MCPStdioProcess.displayName(command))", ["pid": String(process.pid)])
        case .streamableHTTP(let url, let headers, let bearerToken):
            let inbox = Inbox(
                server: name, maximumMessageBytes: configuration.maximumMessageBytes, logSink: logSink,
                redactor: SecretRedactor(secrets: configuration.secrets + (bearerToken.map { [$0] } ?? []) + Array(headers.values)), toolsChanged: toolsChanged
            )
            var middlewares = configuration.middlewares
            if let bearerToken {
                middlewares.insert(AuthenticationMiddleware(credentials: AuthCredentials(bearerToken: bearerToken, binding: "mcp:\(name)", secrets: [bearerToken])), at: 0)
            }
            let http = MCPHTTPLink(
                url: url, headers: headers, middlewares: middlewares, httpClient: configuration.httpClient ?? MCPServerConfiguration.sharedHTTPClient,
                maximumMessageBytes: configuration.maximumMessageBytes, requestTimeout: configuration.requestTimeout, clock: clock,
                callbacks: MCPHTTPLink.Callbacks(
                    message: { inbox.receive($0) }, pending: { inbox.isPending($0) }, failed: { inbox.fail($0, $1) },
                    ended: { inbox.end($0.naming(name), stop: false) },
                    log: { level, event, message in inbox.log(level, event, message, [:]) }
                )
            )
            inbox.replier.withLock {
                $0 = SendableReference((send: { message in try? await http.post(message, era: nil) }, stop: { await http.close() }))
            }
            link = .http(http)
            self.inbox = inbox
        }
    }

    /// Why the connection ended, or nil while it is live.
    var endedError: MCPError? { inbox.state.withLock { $0.ended } }

    /// The server process's ID, for a stdio server.
    var processIdentifier: Int32? {
        if case .stdio(let process) = link { return process.pid }
        return nil
    }

    /// Registers a request, or returns nil when the connection has ended.
    func open(method: String, waiter: MCPReplyWaiter) -> MCPRequestTable<MCPReplyWaiter>.Entry? {
        inbox.state.withLock { state in
            guard state.ended == nil else { return nil }
            return state.table.open(method: method, wantsProgress: waiter.progress != nil, waiter: waiter)
        }
    }

    /// Removes a request that will not be answered (cancelled, timed out, or never sent), and stops
    /// reading its HTTP stream.
    @discardableResult
    func remove(_ id: Int64) -> MCPRequestTable<MCPReplyWaiter>.Entry? {
        if case .http(let http) = link { http.closeStream(of: id) }
        return inbox.state.withLock { $0.table.remove(id) }
    }

    /// Whether a withdrawn request is cancelled by closing its stream (no `notifications/cancelled`).
    var cancelsByClosingStreams: Bool {
        if case .http(let http) = link { return http.cancelsByClosingStreams }
        return false
    }

    /// Settles the revision on the link.
    func negotiated(_ era: MCPSessionEra) {
        if case .stateless = era { inbox.stateless.withLock { $0 = true } }
        if case .http(let http) = link { http.negotiated(era) }
    }

    /// Writes a message in `era`'s form (HTTP headers; stdio ignores it).
    func send(_ message: MCPMessage, era: MCPSessionEra?, parameterHeaders: [String: String] = [:]) async throws(MCPError) {
        do {
            switch link {
            case .stdio(let process): try await process.send(message.encoded())
            case .http(let http): try await http.post(message, era: era, parameterHeaders: parameterHeaders)
            }
        } catch {
            throw error.naming(server)
        }
    }

    /// Ends the connection (requests fail with `error`) and the process or session.
    func close(_ error: MCPError) async {
        inbox.end(error, stop: false)
        switch link {
        case .stdio(let process): await process.terminate()
        case .http(let http): await http.close()
        }
    }

    /// Records a log event naming the server.
    func log(_ level: AgentLogLevel, _ name: String, _ message: String, _ metadata: [String: String] = [:]) {
        inbox.log(level, name, message, metadata)
    }

    /// Arguments that may be secrets, for the stderr redactor: values (not options, not paths), and the
    /// value of each `--option=value`.
    static func secretCandidates(_ arguments: [String]) -> [String] {
        arguments.compactMap { argument -> String? in
            let value = argument.hasPrefix("-") ? argument.split(separator: "=", maxSplits: 1).dropFirst().first.map(String.init) : argument
            guard let value, !value.contains("/") else { return nil }
            return value
        }
    }
}
