public import Foundation

/// An HTTP/1.1 server on 127.0.0.1 for tests, benchmarks and the offline demo, built on POSIX sockets
/// so it exercises the real network stack of the client under test (URLSession/libcurl, a raw socket, a child process).
///
/// It listens on an ephemeral port from `init` on, with one accept thread and one thread per connection.
/// Every complete request is recorded (before the handler runs), then answered with the handler's
/// `ScriptedReply`, which can stream, pause, hold until `releaseHeld()`, or reset the connection.
/// Connections are kept alive until the client closes, asks for `Connection: close`, or the reply is
/// close-delimited or aborted.
///
/// The handler runs on the connection's thread; it must not capture the server strongly, or the server
/// is never deinitialized (call `shutdown()` explicitly in that case).
public final class LoopbackHTTPServer: Sendable {
    /// The state shared with the server's threads.
    private let core: LoopbackServerCore

    /// The TCP port the server listens on.
    public let port: Int

    /// Starts listening on 127.0.0.1 and accepting connections.
    /// - Parameters:
    ///   - keepsRequests: Whether `requests` keeps every request; a benchmark that sends many requests
    ///     passes false so the server's memory stays flat (the handler still sees each one).
    ///   - handler: Produces the reply for each request; runs on the connection's thread.
    /// - Throws: `LoopbackServerError` when the listening socket cannot be set up.
    public init(keepsRequests: Bool = true, handler: @escaping @Sendable (RecordedRequest) -> ScriptedReply) throws {
        let (socket, port) = try LoopbackSocket.listenOnLoopback()
        let core = LoopbackServerCore(keepsRequests: keepsRequests, handler: handler)
        var listener = socket
        listener.wake = core.wake
        let accepting = listener
        self.core = core
        self.port = port
        let started = core.spawnThread(named: "LoopbackHTTPServer.accept:\(port)") {
            Self.acceptLoop(listener: accepting, core: core)
        }
        if !started { accepting.close() }
    }

    /// Starts a server that answers the n-th request with `replies[n]`, and every request after the last
    /// reply with status 500 and the body `no scripted reply`.
    /// - Parameter replies: The replies, in request arrival order.
    /// - Throws: `LoopbackServerError` when the listening socket cannot be set up.
    public convenience init(replies: [ScriptedReply]) throws {
        let queue = ScriptedReplyQueue(replies)
        try self.init { _ in queue.next() }
    }

    deinit {
        core.shutdown()
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    public var baseURL: URL {
        var components = URLComponents()
        components.scheme = "http"
        components.host = "127.0.0.1"
        components.port = port
        // Scheme, IP literal and port always form a valid URL; the fallback is unreachable.
        return components.url ?? URL(fileURLWithPath: "/")
    }

    /// Every complete request so far, in arrival order (empty when the server does not keep requests).
    public var requests: [RecordedRequest] { core.requests }

    /// TCP connections accepted so far.
    public var acceptedConnectionCount: Int { core.acceptedConnectionCount }

    /// Connections accepted and not yet closed.
    public var openConnectionCount: Int { core.openConnectionCount }

    /// Connections closed so far, by either side.
    public var closedConnectionCount: Int { core.closedConnectionCount }

    /// Body bytes of `.bytes` parts the server has finished handing to the kernel, over all connections.
    /// A client that stops reading makes this stop growing once the socket buffers are full.
    public var sentBodyByteCount: Int { core.sentBodyByteCount }

    /// The number of complete requests received so far, kept or not.
    public var requestCount: Int { core.requestCount }

    /// Waits until at least `count` requests have been recorded.
    /// - Parameters:
    ///   - count: The number of requests to wait for.
    ///   - timeout: How long to wait at most.
    /// - Returns: Whether the count was reached in time.
    public func waitForRequests(count: Int, timeout: Duration) async -> Bool {
        await Self.wait(timeout: timeout) { self.core.requestCount >= count }
    }

    /// Waits until at least `count` connections have been closed.
    /// - Parameters:
    ///   - count: The number of closed connections to wait for.
    ///   - timeout: How long to wait at most.
    /// - Returns: Whether the count was reached in time.
    public func waitForClosedConnections(count: Int, timeout: Duration) async -> Bool {
        await Self.wait(timeout: timeout) { self.core.closedConnectionCount >= count }
    }

    /// Waits until `sentBodyByteCount` stops growing (unchanged over `stablePolls` polls 50 ms apart), reaches
    /// `limit`, or `timeout` passes: how far a sender gets against a client that stopped reading.
    /// - Parameters:
    ///   - limit: Stop watching once this many body bytes were sent.
    ///   - stablePolls: How many unchanged polls in a row count as stalled.
    ///   - timeout: How long to watch at most.
    /// - Returns: The body bytes sent when watching stopped.
    public func waitForSenderToStall(limit: Int = .max, stablePolls: Int = 8, timeout: Duration = .hangGuard) async -> Int {
        await waitForPlateau(limit: limit, stablePolls: stablePolls, timeout: timeout) { sentBodyByteCount }
    }

    /// Lets every reply parked at a `.hold` part continue, including replies whose request is recorded
    /// but that have not reached their `.hold` yet; holds reached by later requests park again.
    public func releaseHeld() {
        core.releaseHeld()
    }

    /// Stops accepting, closes the listener and every connection, and waits for the server's threads to
    /// finish (for an idle server, well under a millisecond). Idempotent; `deinit` calls it too.
    public func shutdown() {
        core.shutdown()
    }

    /// Polls `condition` every few milliseconds until it holds or `timeout` passes (or the task is cancelled).
    private static func wait(timeout: Duration, until condition: @Sendable () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            do {
                try await Task.sleep(for: .milliseconds(5))
            } catch {
                return condition()
            }
        }
        return true
    }

    /// Accepts connections until shutdown, each served on its own thread, then closes the listener.
    private static func acceptLoop(listener: LoopbackSocket, core: LoopbackServerCore) {
        while !core.isStopping {
            guard let connected = listener.acceptConnection() else { continue }
            let id = core.connectionAccepted()
            let started = core.spawnThread(named: "LoopbackHTTPServer.connection#\(id)") {
                LoopbackConnection(id: id, socket: connected, core: core).run()
            }
            if !started {
                connected.close()
                core.connectionClosed()
            }
        }
        listener.close()
    }
}
