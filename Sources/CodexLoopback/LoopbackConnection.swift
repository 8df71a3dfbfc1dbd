/// Serves one accepted connection on its own thread: reads requests, records them, asks the handler for a
/// reply and plays it back, until either side closes. Confined to that thread, so it needs no locking.
final class LoopbackConnection {
    /// Why the serving loop ended; decides how the socket is closed.
    enum Ending {
        /// The client closed or reset the connection: close our end.
        case peerClosed
        /// The server is shutting down: close at once.
        case stopped
        /// The server decided to close (`Connection: close`, close-delimited reply, rejected request).
        case serverClose
        /// A `.closeAbruptly` part: reset the connection.
        case abort
        /// A `.halfClose` part already closed the socket.
        case alreadyClosed
    }

    /// The largest accepted request head, including the request line and the blank line.
    static let headLimit = 64 * 1024
    /// The largest accepted request body.
    static let bodyLimit = 256 * 1024 * 1024

    let id: Int
    let socket: LoopbackSocket
    let core: LoopbackServerCore
    /// Received bytes not yet parsed.
    var input = InputBuffer()

    /// Creates the connection's server side.
    init(id: Int, socket: LoopbackSocket, core: LoopbackServerCore) {
        self.id = id
        self.socket = socket
        self.core = core
    }

    /// Serves requests until the connection ends, closes the socket and counts the close.
    func run() {
        switch serve() {
        case .peerClosed, .stopped: socket.close()
        case .serverClose: socket.closeGracefully { core.isStopping }
        case .abort: socket.closeAbortively()
        case .alreadyClosed: break
        }
        core.connectionClosed()
    }

    /// The request/reply loop.
    private func serve() -> Ending {
        while true {
            let head: HTTPRequestHead
            let body: [UInt8]
            do {
                head = try readHead()
                body = try readBody(for: head)
            } catch {
                switch error {
                case .peerClosed: return .peerClosed
                case .stopped: return .stopped
                case .rejected(let status):
                    let reply = ScriptedReply(status: status, headers: [HTTPHeaderField(name: "Connection", value: "close")])
                    return socket.sendAll(reply.headBytes) { core.isStopping } ? .serverClose : .peerClosed
                }
            }
            let request = RecordedRequest(
                method: head.method,
                path: head.path,
                query: head.query,
                headers: head.headers,
                body: body,
                connectionID: id,
                receivedAt: .now
            )
            let holdGeneration = core.record(request)
            let reply = core.handler(request)
            if let ending = play(reply, omitBody: head.method == "HEAD", holdGeneration: holdGeneration) {
                return ending
            }
            if !head.wantsKeepAlive || reply.requestsClose { return .serverClose }
        }
    }
}
