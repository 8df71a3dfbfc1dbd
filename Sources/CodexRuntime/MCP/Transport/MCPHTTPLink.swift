import CodexCore
import CodexSchema
import CodexTransport
import Foundation
import Synchronization

/// A Streamable HTTP MCP server: every client message is a POST to one endpoint, through the host's
/// HTTP client and middleware; a request's reply is one JSON body or a request-scoped SSE stream whose
/// messages (progress, then the reply) go to the connection's inbox.
///
/// - The stateless revision sends `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` on every request,
///   mirrors `x-mcp-header` arguments into `Mcp-Param-*` headers, and cancels a request by closing its
///   stream.
/// - A handshake revision keeps the `Mcp-Session-Id` the server issues (a 404 on it ends the session;
///   the client starts a new one), sends `MCP-Protocol-Version` after the handshake, opens the optional
///   GET stream for the server's own messages, resumes a dropped stream with `Last-Event-ID` when the
///   server numbers its events, and deletes the session when closed.
final class MCPHTTPLink: Sendable {
    /// What the link reports to its connection.
    struct Callbacks: Sendable {
        /// One JSON-RPC message (or batch) from the server.
        let message: @Sendable ([UInt8]) -> Void
        /// Whether a request still waits for its reply.
        let pending: @Sendable (Int64) -> Bool
        /// A request that will get no reply through this link (an HTTP error status, a stream that
        /// ended first): fail it unless it was answered.
        let failed: @Sendable (Int64, MCPError) -> Void
        /// The session ended (a 404 on it): every request fails; the client starts a new one.
        let ended: @Sendable (MCPError) -> Void
        /// A log event.
        let log: @Sendable (AgentLogLevel, String, String) -> Void
    }

    private struct State {
        var sessionID: String?
        var negotiated: MCPSessionEra?
        var streams: [Int64: Task<Void, Never>] = [:]
        var listener: Task<Void, Never>?
        var closed = false
    }

    let url: URL
    private let chain: HTTPMiddlewareChain
    private let headers: [String: String]
    private let maximumMessageBytes: Int
    private let requestTimeout: Duration
    private let clock: any Clock<Duration>
    private let callbacks: Callbacks
    private let state = Mutex<State>(State())

    /// How many times in a row the GET stream is opened again after it drops.
    static let maximumStreamReconnects = 5

    /// Creates a link; nothing is sent yet.
    init(
        url: URL, headers: [String: String], middlewares: [any HTTPMiddleware], httpClient: any HTTPClient, maximumMessageBytes: Int,
        requestTimeout: Duration, clock: any Clock<Duration>, callbacks: Callbacks
    ) {
        self.url = url
        self.headers = headers
        chain = HTTPMiddlewareChain(middlewares: middlewares, client: httpClient)
        self.maximumMessageBytes = maximumMessageBytes
        self.requestTimeout = requestTimeout
        self.clock = clock
        self.callbacks = callbacks
    }

    /// The session the server issued, if any.
    var sessionID: String? { state.withLock { $0.sessionID } }

    /// Settles the revision: later messages carry its headers; a handshake session opens the GET stream.
    func negotiated(_ era: MCPSessionEra) {
        let listen = state.withLock { state -> Bool in
            state.negotiated = era
            if case .handshake = era, state.listener == nil, !state.closed { return true }
            return false
        }
        if listen {
            let listener = Task { [self] in await listenForServerMessages() }
            state.withLock { $0.listener = listener }
        }
    }

    /// Whether closing a request's stream is how it is cancelled (the stateless revision): the client
    /// then sends no `notifications/cancelled`.
    var cancelsByClosingStreams: Bool {
        if case .stateless? = state.withLock({ $0.negotiated }) { return true }
        return false
    }

    /// POSTs `message` in `era`'s form and returns once the server accepted it; a request's reply is
    /// delivered through the callbacks, from its JSON body or its SSE stream.
    func post(_ message: MCPMessage, era: MCPSessionEra?, parameterHeaders: [String: String] = [:]) async throws(MCPError) {
        var request = HTTPRequest(method: "POST", url: url, body: message.encoded(), timeouts: timeouts(streaming: true))
        for (name, value) in headers { request.headers[name] = value }
        request.headers["Content-Type"] = "application/json"
        request.headers["Accept"] = "application/json, text/event-stream"
        let (sessionID, negotiated) = state.withLock { ($0.sessionID, $0.negotiated) }
        let method: String?
        var requestID: Int64?
        switch message {
        case .request(let id, let name, _):
            method = name
            if case .number(let number) = id { requestID = number }
        case .notification(let name, _): method = name
        default: method = nil
        }
        switch era ?? negotiated {
        case .stateless(let version)?:
            request.headers["MCP-Protocol-Version"] = version
            if let method { request.headers["Mcp-Method"] = method }
            if case .request(_, "tools/call", let params) = message, let name = params?["name"]?.stringValue {
                request.headers["Mcp-Name"] = Self.headerValue(name)
            }
            for (name, value) in parameterHeaders { request.headers["Mcp-Param-" + name] = Self.headerValue(value) }
        case .handshake(let version)?:
            if method != "initialize" { request.headers["MCP-Protocol-Version"] = version }
            if let sessionID { request.headers["Mcp-Session-Id"] = sessionID }
        case nil:
            break
        }
        let response: HTTPResponse
        do {
            response = try await chain.send(request, context: HTTPMiddlewareContext())
        } catch is CancellationError {
            throw MCPError(code: .transportFailed, message: "the request was cancelled before the server answered")
        } catch {
            throw MCPError(code: .transportFailed, message: "the POST failed (\((error as? AgentRuntimeError)?.code.rawValue ?? "transport_failure"))", underlying: error)
        }
        if let issued = response.headers["Mcp-Session-Id"], sessionID == nil, Self.isVisibleASCII(issued) {
            state.withLock { $0.sessionID = issued }
        }
        try await handle(response, requestID: requestID, hadSession: sessionID != nil)
    }

    /// Stops reading request `id`'s stream (in the stateless revision, that cancels the request);
    /// returns nil when it had none.
    @discardableResult
    func closeStream(of id: Int64) -> Void? {
        guard let stream = state.withLock({ $0.streams.removeValue(forKey: id) }) else { return nil }
        stream.cancel()
        return ()
    }

    /// Closes every stream and, for a handshake session, deletes it on the server.
    func close() async {
        let (streams, listener, sessionID, negotiated) = state.withLock { state in
            state.closed = true
            defer {
                state.streams.removeAll()
                state.listener = nil
            }
            return (Array(state.streams.values), state.listener, state.sessionID, state.negotiated)
        }
        for stream in streams { stream.cancel() }
        listener?.cancel()
        guard let sessionID, case .handshake(let version)? = negotiated else { return }
        var request = HTTPRequest(method: "DELETE", url: url, timeouts: HTTPTimeouts(connect: .seconds(5), firstByte: .seconds(5), idle: .seconds(5), total: .seconds(10)))
        for (name, value) in headers { request.headers[name] = value }
        request.headers["Mcp-Session-Id"] = sessionID
        request.headers["MCP-Protocol-Version"] = version
        if let response = try? await chain.send(request, context: HTTPMiddlewareContext()) { response.body.cancel() }
    }

    // MARK: - Replies

    private func handle(_ response: HTTPResponse, requestID: Int64?, hadSession: Bool) async throws(MCPError) {
        let status = response.statusCode
        if status == 404, hadSession {
            response.body.cancel()
            // This request was refused, so it may be sent again on a new session; the others in flight
            // were accepted and their outcome is unknown: they fail with a code that is not retried.
            let error = MCPError(code: .sessionExpired, message: "the server ended the session (HTTP 404)")
            if let requestID { callbacks.failed(requestID, error) }
            callbacks.ended(MCPError(code: .transportFailed, message: "the server ended the session while the request was in flight"))
            throw error
        }
        if status == 401 || status == 403 {
            response.body.cancel()
            throw MCPError(code: .unauthorized, message: "the server refused the credentials (HTTP \(status))")
        }
        let contentType = (response.headers["Content-Type"] ?? "").lowercased()
        guard (200..<300).contains(status) else {
            // An error status may carry a JSON-RPC error (the stateless revision's version and header
            // refusals do); anything else is a transport failure naming the status.
            let body = (try? await response.body.prefix(upTo: min(maximumMessageBytes, 65_536))) ?? []
            if contentType.hasPrefix("application/json"), let messages = try? MCPMessage.decode(body, maximumBytes: maximumMessageBytes),
               case .error(let id, let remote)? = messages.first
            {
                if let requestID, id == .number(requestID) {
                    callbacks.message(body)
                    return
                }
                var error = MCPError(code: .remoteError, message: "the server refused the message (HTTP \(status))", rpcCode: remote.code, remoteMessage: String(remote.message.prefix(1_000)))
                error.remoteData = remote.data
                throw error
            }
            throw MCPError(code: .transportFailed, message: "the server answered HTTP \(status)")
        }
        guard let requestID else {
            response.body.cancel()
            return
        }
        if status == 202 {
            response.body.cancel()
            throw MCPError(code: .protocolViolation, message: "the server accepted a request without answering it (HTTP 202)")
        }
        if contentType.hasPrefix("text/event-stream") {
            guard callbacks.pending(requestID) else {
                // Withdrawn while the headers were on their way: closing the stream cancels it.
                response.body.cancel()
                return
            }
            let reader = Task { [self] in await read(response.body, for: requestID) }
            let registered = state.withLock { state -> Bool in
                guard !state.closed else { return false }
                state.streams[requestID] = reader
                return true
            }
            if !registered || !callbacks.pending(requestID) { closeStream(of: requestID) ?? reader.cancel() }
            return
        }
        let body: [UInt8]
        do {
            body = try await response.body.collect(upTo: maximumMessageBytes)
        } catch {
            throw MCPError(code: (error as? AgentRuntimeError)?.code == .responseTooLarge ? .messageTooLarge : .transportFailed, message: "reading the reply failed", underlying: error)
        }
        callbacks.message(body)
    }

    /// Reads one request's SSE stream; a stream that ends before the reply fails the request (after
    /// resuming it with `Last-Event-ID` when the server numbered its events).
    private func read(_ body: HTTPResponseBody, for requestID: Int64) async {
        var lastEventID: String?
        var retry: Int?
        let outcome = await readEvents(body, lastEventID: &lastEventID, retry: &retry)
        var failure = outcome
        // A stream that ended before its reply is resumed from its last event, when the server numbers
        // them; one that delivered its reply is done.
        if failure == nil || failure?.code == .transportFailed, let lastEventID, !Task.isCancelled, callbacks.pending(requestID) {
            if let retry, retry > 0 { try? await clock.sleep(for: .milliseconds(min(retry, 60_000))) }
            failure = await resume(from: lastEventID)
        }
        state.withLock { _ = $0.streams.removeValue(forKey: requestID) }
        guard !Task.isCancelled else { return }
        callbacks.failed(requestID, failure ?? MCPError(code: .transportFailed, message: "the reply stream ended before the reply"))
    }

    /// Delivers every event of `body`; returns why it stopped (nil: it ended normally).
    private func readEvents(_ body: HTTPResponseBody, lastEventID: inout String?, retry: inout Int?) async -> MCPError? {
        var framer = SSEFramer(maximumEventBytes: maximumMessageBytes)
        var events: [SSEEvent] = []
        do {
            for try await chunk in body {
                events.removeAll(keepingCapacity: true)
                do {
                    try framer.feed(chunk, into: &events)
                } catch {
                    body.cancel()
                    return MCPError(code: .messageTooLarge, message: "an event of the reply stream is over the \(maximumMessageBytes)-byte limit", underlying: error)
                }
                for event in events {
                    if let id = event.lastEventID, !id.isEmpty { lastEventID = id }
                    if let delay = event.retry { retry = delay }
                    guard !event.dataBytes.isEmpty, event.type == "message" else { continue }
                    callbacks.message(event.dataBytes)
                }
            }
            return nil
        } catch is CancellationError {
            return nil
        } catch {
            return MCPError(code: .transportFailed, message: "the reply stream broke", underlying: error)
        }
    }

    /// Asks a handshake server to replay a stream from `lastEventID` (GET with `Last-Event-ID`).
    private func resume(from lastEventID: String) async -> MCPError? {
        guard case .handshake(let version)? = state.withLock({ $0.negotiated }) else { return nil }
        callbacks.log(.info, "mcp.http.stream_resumed", "resuming a reply stream with Last-Event-ID")
        guard let response = try? await get(version: version, lastEventID: lastEventID), response.isSuccess else {
            return MCPError(code: .transportFailed, message: "the reply stream could not be resumed")
        }
        var last: String? = lastEventID
        var retry: Int?
        return await readEvents(response.body, lastEventID: &last, retry: &retry)
    }

    /// The optional GET stream of a handshake session: the server's own notifications and requests.
    /// A server without one answers 405; a stream that drops is opened again (with `Last-Event-ID`
    /// when the server numbers its events), after the server's `retry` delay or one second.
    private func listenForServerMessages() async {
        var lastEventID: String?
        var retry: Int?
        var failures = 0
        while !Task.isCancelled, failures < Self.maximumStreamReconnects {
            guard case .handshake(let version)? = state.withLock({ $0.negotiated }) else { return }
            let response: HTTPResponse
            do {
                response = try await get(version: version, lastEventID: lastEventID)
            } catch {
                failures += 1
                try? await clock.sleep(for: .seconds(1))
                continue
            }
            guard response.isSuccess, (response.headers["Content-Type"] ?? "").lowercased().hasPrefix("text/event-stream") else {
                response.body.cancel()
                if response.statusCode != 405 { callbacks.log(.debug, "mcp.http.no_server_stream", "the server offers no GET stream (HTTP \(response.statusCode))") }
                return
            }
            failures = 0
            _ = await readEvents(response.body, lastEventID: &lastEventID, retry: &retry)
            failures += 1
            // The server's `retry` field, else one second.
            try? await clock.sleep(for: .milliseconds(min(max(retry ?? 1_000, 0), 60_000)))
        }
    }

    private func get(version: String, lastEventID: String?) async throws -> HTTPResponse {
        var request = HTTPRequest(method: "GET", url: url, timeouts: timeouts(streaming: true))
        for (name, value) in headers { request.headers[name] = value }
        request.headers["Accept"] = "text/event-stream"
        request.headers["MCP-Protocol-Version"] = version
        if let sessionID = state.withLock({ $0.sessionID }) { request.headers["Mcp-Session-Id"] = sessionID }
        if let lastEventID { request.headers["Last-Event-ID"] = lastEventID }
        return try await chain.send(request, context: HTTPMiddlewareContext())
    }

    /// The client's own timer bounds each request; the transfer timeouts only guard against a dead peer.
    private func timeouts(streaming: Bool) -> HTTPTimeouts {
        HTTPTimeouts(connect: .seconds(30), firstByte: requestTimeout + .seconds(30), idle: streaming ? .seconds(86_400) : requestTimeout + .seconds(30))
    }

    // MARK: - Header values

    /// A header value as the stateless revision writes it: plain visible ASCII as it is; anything else
    /// (non-ASCII, control characters, surrounding spaces) as `=?base64?<base64 of the UTF-8>?=`.
    static func headerValue(_ value: String) -> String {
        let bytes = Array(value.utf8)
        let plain = !bytes.isEmpty && bytes.allSatisfy { (0x20...0x7E).contains($0) } && bytes.first != 0x20 && bytes.last != 0x20
            && !(value.hasPrefix("=?base64?") && value.hasSuffix("?="))
        return plain ? value : "=?base64?" + Data(bytes).base64EncodedString() + "?="
    }

    private static func isVisibleASCII(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
