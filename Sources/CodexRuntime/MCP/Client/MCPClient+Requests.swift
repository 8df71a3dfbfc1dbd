import CodexCore
import CodexSchema
import Synchronization

extension MCPClient {
    /// Sends one request and waits for its reply, within `timeout`.
    ///
    /// The message is written by a task of its own, so the caller returns the moment the outcome is
    /// known: the reply, the timeout, its own cancellation, or the end of the connection. A request
    /// withdrawn (cancelled or expired) is cancelled on the server: its stream is closed in the
    /// stateless HTTP revision; otherwise `notifications/cancelled` follows, once the request was
    /// written (never before it, and not at all for a request that was never written), unless
    /// `cancellable` is false (`initialize` must not be cancelled).
    func request(
        _ method: String, _ params: JSONObject, on connection: MCPConnection, era: MCPSessionEra?, timeout: Duration,
        progress: (@Sendable (MCPProgress) -> Void)? = nil, cancellable: Bool = true, parameterHeaders: [String: String] = [:]
    ) async throws -> JSONValue {
        let waiter = MCPReplyWaiter(progress: progress)
        guard let entry = connection.open(method: method, waiter: waiter) else {
            throw connection.endedError ?? closedError
        }
        let id = entry.id
        let message = MCPMessage.request(id: .number(id), method: method, params: .object(Self.stamped(params, era: era, progressToken: entry.progressToken)))
        let delivery = MCPDelivery()
        let sending = Task {
            guard delivery.beginSending() else { return }
            do {
                try await connection.send(message, era: era, parameterHeaders: parameterHeaders)
                if delivery.markWritten(), cancellable { self.sendCancelled(id, on: connection, era: era, timedOut: delivery.timedOut) }
            } catch {
                connection.remove(id)?.waiter.finish(.failure(error))
            }
        }
        delivery.setTask(sending)
        let clock = self.clock
        let timer = Task {
            try await clock.sleepInSlices(for: timeout)
            self.withdraw(id, on: connection, era: era, delivery: delivery, because: MCPError(code: .timeout, message: "\(method) had no reply within \(timeout)", server: self.name), notify: cancellable)
        }
        defer { timer.cancel() }
        let result = try await withTaskCancellationHandler {
            try await waiter.wait()
        } onCancel: {
            self.withdraw(id, on: connection, era: era, delivery: delivery, because: CancellationError(), notify: cancellable)
        }
        return try Self.checkResultType(result, method: method, server: name)
    }

    /// Fails a request that will not be answered and cancels it on the server.
    private func withdraw(_ id: Int64, on connection: MCPConnection, era: MCPSessionEra?, delivery: MCPDelivery, because error: any Error, notify: Bool) {
        guard let entry = connection.remove(id) else { return }
        entry.waiter.finish(.failure(error))
        if connection.cancelsByClosingStreams {
            // The stateless HTTP revision: closing the request (its POST or its stream) is the cancellation.
            delivery.withdraw(timedOut: false)
            delivery.cancelSending()
            return
        }
        let written = delivery.withdraw(timedOut: error is MCPError)
        if written, notify { sendCancelled(id, on: connection, era: era, timedOut: error is MCPError) }
    }

    private func sendCancelled(_ id: Int64, on connection: MCPConnection, era: MCPSessionEra?, timedOut: Bool) {
        var params = JSONObject()
        params["requestId"] = .number(JSONNumber(id))
        params["reason"] = .string(timedOut ? "The request timed out." : "The client cancelled the request.")
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
}

/// Whether one request was written and whether it was withdrawn, so that the cancellation follows the
/// request exactly once and never precedes it.
final class MCPDelivery: Sendable {
    private struct State {
        var written = false
        var withdrawn = false
        var timedOut = false
        var sending: Task<Void, Never>?
    }

    private let state = Mutex<State>(State())

    /// Keeps the task writing the request (cancelled when a stateless HTTP request is withdrawn).
    func setTask(_ task: Task<Void, Never>) {
        let cancel = state.withLock { state -> Bool in
            state.sending = task
            return state.withdrawn
        }
        if cancel { task.cancel() }
    }

    /// Whether the request should still be written (false once withdrawn).
    func beginSending() -> Bool { state.withLock { !$0.withdrawn } }

    /// Records the write; returns whether the request was withdrawn meanwhile (the cancellation is then
    /// the writer's to send).
    func markWritten() -> Bool {
        state.withLock { state in
            state.written = true
            return state.withdrawn
        }
    }

    /// Whether the withdrawal came from the timeout.
    var timedOut: Bool { state.withLock { $0.timedOut } }

    /// Records the withdrawal; returns whether the request was already written (the cancellation is then
    /// the withdrawer's to send).
    @discardableResult
    func withdraw(timedOut: Bool) -> Bool {
        state.withLock { state in
            state.withdrawn = true
            state.timedOut = timedOut
            return state.written
        }
    }

    /// Cancels the writing task (an HTTP POST in flight, and the stream it opened).
    func cancelSending() {
        state.withLock { $0.sending }?.cancel()
    }
}
