public import CodexTransport
import Synchronization

/// An ``HTTPClient`` double that answers from a script and records every request, for your own tests
/// of code built on CodexTransport (no network involved).
///
/// ```swift
/// let http = ScriptedHTTPClient(replies: [
///     .init(status: 200, headers: ["Content-Type": "text/event-stream"], chunks: [Array(sse.utf8)]),
/// ])
/// // … run the code under test with `http` …
/// http.requests.count // 1
/// ```
public final class ScriptedHTTPClient: HTTPClient {
    /// One scripted answer.
    public struct Reply: Sendable {
        /// The status code.
        public var status: Int
        /// The response headers.
        public var headers: HTTPHeaders
        /// The body chunks, delivered in order.
        public var chunks: [[UInt8]]
        /// Thrown by `send` instead of answering (e.g. a transport failure).
        public var sendError: (any Error & Sendable)?
        /// Thrown by the body after its chunks (e.g. a dropped connection).
        public var bodyError: (any Error & Sendable)?

        /// Creates a reply.
        public init(
            status: Int = 200, headers: HTTPHeaders = [:], chunks: [[UInt8]] = [], sendError: (any Error & Sendable)? = nil,
            bodyError: (any Error & Sendable)? = nil
        ) {
            self.status = status
            self.headers = headers
            self.chunks = chunks
            self.sendError = sendError
            self.bodyError = bodyError
        }

        /// A reply whose body is `text` in one chunk.
        public static func text(_ text: String, status: Int = 200, headers: HTTPHeaders = [:]) -> Reply {
            Reply(status: status, headers: headers, chunks: [Array(text.utf8)])
        }
    }

    private let handler: @Sendable (HTTPRequest, Int) async throws -> Reply
    private let recorded = Mutex<[HTTPRequest]>([])

    /// A client that asks `handler` for each reply; the second argument is the 0-based request number.
    public init(handler: @escaping @Sendable (HTTPRequest, Int) async throws -> Reply) {
        self.handler = handler
    }

    /// A client that answers with `replies` in order, then with status 599 and an empty body.
    public convenience init(replies: [Reply]) {
        self.init { _, index in index < replies.count ? replies[index] : Reply(status: 599) }
    }

    /// Every request received, in order.
    public var requests: [HTTPRequest] { recorded.withLock { $0 } }

    /// Records the request and answers from the script.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let index = recorded.withLock { requests -> Int in
            requests.append(request)
            return requests.count - 1
        }
        try Task.checkCancellation()
        let reply = try await handler(request, index)
        if let sendError = reply.sendError { throw sendError }
        return HTTPResponse(statusCode: reply.status, headers: reply.headers, body: HTTPResponseBody(source: ScriptedBodySource(reply.chunks, error: reply.bodyError)))
    }
}

/// Chunks, then optionally an error.
final class ScriptedBodySource: HTTPBodySource {
    private let state: Mutex<(chunks: [[UInt8]], position: Int, error: (any Error & Sendable)?, cancelled: Bool)>

    init(_ chunks: [[UInt8]], error: (any Error & Sendable)?) {
        state = Mutex((chunks, 0, error, false))
    }

    func next() async throws -> [UInt8]? {
        let result: Result<[UInt8]?, any Error> = state.withLock { state in
            if state.cancelled { return .failure(CancellationError()) }
            if state.position < state.chunks.count {
                defer { state.position += 1 }
                return .success(state.chunks[state.position])
            }
            if let error = state.error {
                state.error = nil
                return .failure(error)
            }
            return .success(nil)
        }
        return try result.get()
    }

    func cancel() {
        state.withLock { $0.cancelled = true }
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }
}
