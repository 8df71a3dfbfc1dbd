import CodexCore
import Synchronization

/// A response whose headers have arrived; its body streams.
///
/// Read the body once, from one task. Cancelling that task, or dropping the body and every iterator,
/// cancels the underlying request and closes its connection.
public struct HTTPResponse: Sendable {
    /// The status code.
    public let statusCode: Int
    /// The response headers.
    public let headers: HTTPHeaders
    /// The body as byte chunks.
    public let body: HTTPResponseBody

    /// Creates a response.
    public init(statusCode: Int, headers: HTTPHeaders, body: HTTPResponseBody) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(statusCode) }
}

/// Where an ``HTTPResponseBody`` gets its chunks.
public protocol HTTPBodySource: AnyObject, Sendable {
    /// The next chunk, or `nil` at the end.
    func next() async throws -> [UInt8]?
    /// Stops the transfer; later ``next()`` calls return `nil` or throw.
    func cancel()
}

/// A response body as an async sequence of byte chunks.
public struct HTTPResponseBody: AsyncSequence, Sendable {
    /// A chunk of bytes.
    public typealias Element = [UInt8]

    private let handle: Handle

    /// Creates a body over a source.
    public init(source: any HTTPBodySource) {
        handle = Handle(source: source)
    }

    /// A body with fixed chunks (for doubles and tests).
    public init(chunks: [[UInt8]]) {
        self.init(source: FixedBodySource(chunks: chunks))
    }

    /// The iterator.
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        fileprivate let handle: Handle

        /// The next chunk, or `nil` at the end. Cancelling the task cancels the transfer.
        public mutating func next() async throws -> [UInt8]? {
            let source = handle.source
            return try await withTaskCancellationHandler {
                try await source.next()
            } onCancel: {
                source.cancel()
            }
        }
    }

    /// Makes the iterator.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(handle: handle) }

    /// Stops the transfer.
    public func cancel() { handle.source.cancel() }

    /// Reads the whole body, failing when it exceeds `limit` bytes (the rest is not read).
    ///
    /// - Throws: ``AgentRuntimeError`` `response_too_large`, or the transfer's error.
    public func collect(upTo limit: Int) async throws -> [UInt8] {
        var result: [UInt8] = []
        for try await chunk in self {
            if result.count + chunk.count > limit {
                cancel()
                throw AgentRuntimeError(.bodyTooLarge(limit: limit))
            }
            result.append(contentsOf: chunk)
        }
        return result
    }

    /// Reads up to `limit` bytes and cancels the rest (for error bodies that must not be read in full).
    public func prefix(upTo limit: Int) async throws -> [UInt8] {
        var result: [UInt8] = []
        for try await chunk in self {
            result.append(contentsOf: chunk.prefix(limit - result.count))
            if result.count >= limit {
                cancel()
                break
            }
        }
        return result
    }

    /// Keeps the source alive while the body or an iterator exists, and cancels it when the last one goes.
    fileprivate final class Handle: Sendable {
        let source: any HTTPBodySource
        init(source: any HTTPBodySource) { self.source = source }
        deinit { source.cancel() }
    }
}

/// Serves fixed chunks.
final class FixedBodySource: HTTPBodySource {
    private let state: Mutex<(chunks: [[UInt8]], position: Int)>

    init(chunks: [[UInt8]]) { state = Mutex((chunks, 0)) }

    func next() async throws -> [UInt8]? {
        state.withLock { state in
            guard state.position < state.chunks.count else { return nil }
            defer { state.position += 1 }
            return state.chunks[state.position]
        }
    }

    func cancel() {
        state.withLock { $0.position = $0.chunks.count }
    }
}
