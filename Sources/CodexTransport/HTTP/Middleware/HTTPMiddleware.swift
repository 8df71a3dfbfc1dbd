import Synchronization

/// One step in front of an ``HTTPClient``: it may change a request, look at its response, or send it
/// again. A ``ResponsesClient`` is a chain of these in front of its one-method HTTP client.
///
/// ```swift
/// struct Tagging: HTTPMiddleware {
///     func intercept(_ request: HTTPRequest, context: HTTPMiddlewareContext, next: HTTPMiddlewareNext) async throws -> HTTPResponse {
///         var request = request
///         request.headers["x-host-tag"] = "batch"
///         return try await next(request)
///     }
/// }
/// ```
///
/// Implementation requirements: call `next` zero or more times; a response that is not returned must
/// have its body cancelled (which closes its connection); never put credentials in errors or logs.
public protocol HTTPMiddleware: Sendable {
    /// Handles `request`, passing it on with `next`.
    ///
    /// - Parameters:
    ///   - request: The request as the steps before this one left it.
    ///   - context: Shared by every step of this one request.
    ///   - next: The rest of the chain, ending at the HTTP client.
    /// - Returns: The response to hand back up the chain.
    func intercept(_ request: HTTPRequest, context: HTTPMiddlewareContext, next: HTTPMiddlewareNext) async throws -> HTTPResponse
}

/// The rest of a middleware chain: the steps after the current one, then the HTTP client.
public typealias HTTPMiddlewareNext = @Sendable (HTTPRequest) async throws -> HTTPResponse

/// What the steps of one request tell the code that sent it: which credentials it went out with (so
/// errors can be scrubbed of their secrets and caches keyed by their binding).
public final class HTTPMiddlewareContext: Sendable {
    private let used = Mutex<[AuthCredentials]>([])
    private let transportFailure = Mutex(false)

    /// Creates an empty context.
    public init() {}

    /// Records that the request is being sent with `credentials`.
    public func noteCredentials(_ credentials: AuthCredentials) {
        used.withLock { $0.append(credentials) }
    }

    /// Every credential the request was sent with, oldest first (two after a 401 renewal).
    public var credentials: [AuthCredentials] { used.withLock { $0 } }

    /// The secrets of every credential the request was sent with.
    public var secrets: [String] { used.withLock { $0.flatMap(\.secrets) } }

    /// Whether the HTTP client at the end of the chain threw: the sender treats such an error as a lost
    /// connection (retryable), and any other error a step raised (a sign-in failure) as final.
    var transportFailed: Bool { transportFailure.withLock { $0 } }

    func noteTransportFailure() { transportFailure.withLock { $0 = true } }
}

/// An HTTP client with middleware in front of it: `middlewares[0]` sees the request first and the
/// response last.
package struct HTTPMiddlewareChain: Sendable {
    let middlewares: [any HTTPMiddleware]
    let client: any HTTPClient

    /// Chains `middlewares` (the first sees each request first) in front of `client`.
    package init(middlewares: [any HTTPMiddleware], client: any HTTPClient) {
        self.middlewares = middlewares
        self.client = client
    }

    /// Sends `request` through every step.
    package func send(_ request: HTTPRequest, context: HTTPMiddlewareContext) async throws -> HTTPResponse {
        try await send(request, from: 0, context: context)
    }

    private func send(_ request: HTTPRequest, from index: Int, context: HTTPMiddlewareContext) async throws -> HTTPResponse {
        guard index < middlewares.count else {
            do {
                return try await client.send(request)
            } catch {
                context.noteTransportFailure()
                throw error
            }
        }
        let chain = self
        return try await middlewares[index].intercept(request, context: context) { request in
            try await chain.send(request, from: index + 1, context: context)
        }
    }
}
