public import CodexCore
import Foundation
import Synchronization

/// Sends Responses turns and streams their typed events, with the ordinary retry policy, 401 recovery,
/// typed errors and rate-limit tracking.
///
/// ```swift
/// let client = ResponsesClient(configuration: .init(endpoint: .chatGPT), httpClient: DefaultHTTPClient(), authProvider: auth)
/// for try await event in client.stream(request) {
///     if case .outputTextDelta(_, _, _, let delta) = event.kind { print(delta, terminator: "") }
/// }
/// ```
///
/// The client is a chain: the stream's retry step (under ``Configuration/retryPolicy``), then
/// ``HTTPMiddleware`` steps, then the one-method ``HTTPClient``. The `authProvider` initializer builds
/// the ordinary chain, ``AuthenticationMiddleware`` (one 401 renewal) in front of
/// ``HTTPLoggingMiddleware``; the `middlewares` initializer takes any other, such as structured
/// recovery's fixed per-attempt credentials with retries disabled.
///
/// A stream succeeds only on `response.completed`; one that ends without it throws
/// `responses_stream_disconnected`, and `response.failed`, `response.incomplete` and `error` events
/// throw typed errors. Failures are retried (same POST) only while no output has reached the caller.
public final class ResponsesClient: Sendable {
    /// Client options.
    public struct Configuration: Sendable {
        /// Where requests go.
        public var endpoint: ResponsesEndpoint
        /// Request timeouts; `idle` is the stream idle timeout (default 300 s).
        public var timeouts: HTTPTimeouts
        /// The ordinary retry policy.
        public var retryPolicy: RetryPolicy
        /// The largest SSE event accepted.
        public var maximumEventBytes: Int
        /// The `originator` header.
        public var originator: String
        /// The `User-Agent` header.
        public var userAgent: String
        /// Told each response's `X-Models-Etag` and the credentials' binding (connect a
        /// ``ModelCatalogClient/noteModelsETag(_:binding:)`` here).
        public var modelsETagObserver: (@Sendable (_ etag: String, _ binding: String) -> Void)?

        /// Creates a configuration.
        public init(
            endpoint: ResponsesEndpoint,
            timeouts: HTTPTimeouts = .init(),
            retryPolicy: RetryPolicy = .default,
            maximumEventBytes: Int = CodexLimits.maximumEventBytes,
            originator: String = "codexkit",
            userAgent: String = "codexkit/\(CodexKitVersion.current) (Linux)"
        ) {
            self.endpoint = endpoint
            self.timeouts = timeouts
            self.retryPolicy = retryPolicy
            self.maximumEventBytes = maximumEventBytes
            self.originator = originator
            self.userAgent = userAgent
            self.modelsETagObserver = nil
        }
    }

    let configuration: Configuration
    /// The endpoint's host and port, for telemetry spans (worked out once: URL parsing is not cheap).
    let server: (host: String?, port: Int?)
    let chain: HTTPMiddlewareChain
    let clock: any Clock<Duration>
    let wallClock: any AgentWallClock
    let logSink: any AgentLogSink
    /// The latest limits per account binding and family, and the latest `X-Models-Etag`.
    private let latest = Mutex<(limits: [String: [String: AgentRateLimitSnapshot]], modelsETag: String?)>(([:], nil))

    /// Creates a client with the ordinary chain: ``AuthenticationMiddleware`` over `authProvider` (one
    /// renewal after a 401), then ``HTTPLoggingMiddleware``.
    ///
    /// - Parameters:
    ///   - configuration: Endpoint, timeouts, retry policy.
    ///   - httpClient: The HTTP seam (``DefaultHTTPClient`` in production: libcurl on Linux).
    ///   - authProvider: Supplies credentials.
    ///   - clock: The clock retry waits and exchange durations use.
    ///   - wallClock: The date source for `Retry-After` dates and rate-limit resets.
    ///   - logSink: Receives log-safe events (`network.*`, `retry.*`, `auth.*`).
    public convenience init(
        configuration: Configuration,
        httpClient: any HTTPClient,
        authProvider: any AuthProvider,
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: any AgentWallClock = SystemWallClock(),
        logSink: any AgentLogSink = NoOpAgentLogSink()
    ) {
        self.init(
            configuration: configuration, httpClient: httpClient,
            middlewares: [AuthenticationMiddleware(provider: authProvider, logSink: logSink), HTTPLoggingMiddleware(logSink: logSink, clock: clock)],
            clock: clock, wallClock: wallClock, logSink: logSink
        )
    }

    /// Creates a client whose requests pass through `middlewares` (the first sees each request first)
    /// before `httpClient`. One of them must authenticate, such as ``AuthenticationMiddleware``.
    ///
    /// - Parameters:
    ///   - configuration: Endpoint, timeouts, retry policy (``RetryPolicy/disabled`` for none).
    ///   - httpClient: The HTTP seam.
    ///   - middlewares: The steps in front of it.
    ///   - clock: The clock retry waits use.
    ///   - wallClock: The date source for `Retry-After` dates and rate-limit resets.
    ///   - logSink: Receives `retry.*` events.
    public init(
        configuration: Configuration,
        httpClient: any HTTPClient,
        middlewares: [any HTTPMiddleware],
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: any AgentWallClock = SystemWallClock(),
        logSink: any AgentLogSink = NoOpAgentLogSink()
    ) {
        self.configuration = configuration
        let url = configuration.endpoint.url("responses")
        server = (url.host, url.port ?? (url.scheme == "https" ? 443 : url.scheme == "http" ? 80 : nil))
        self.chain = HTTPMiddlewareChain(middlewares: middlewares, client: httpClient)
        self.clock = clock
        self.wallClock = wallClock
        self.logSink = logSink
    }

    /// Streams one turn.
    ///
    /// - Parameters:
    ///   - request: The request body.
    ///   - sessionID: Sent as `session_id` (the thread ID), if any.
    ///   - clientRequestID: Sent as `x-client-request-id`, if any.
    /// - Returns: The events; iterate from one task.
    public func stream(_ request: ResponsesRequest, sessionID: String? = nil, clientRequestID: String? = nil) -> ResponsesEventStream {
        ResponsesEventStream(client: self, body: request.body(), model: request.model, sessionID: sessionID, clientRequestID: clientRequestID, interruption: nil)
    }

    /// ``stream(_:sessionID:clientRequestID:)`` that another task can stop through `interruption`.
    package func stream(
        _ request: ResponsesRequest, sessionID: String?, clientRequestID: String?, interruption: StreamInterruption
    ) -> ResponsesEventStream {
        ResponsesEventStream(
            client: self, body: request.body(), model: request.model, sessionID: sessionID, clientRequestID: clientRequestID, interruption: interruption
        )
    }

    /// Streams one turn whose body is already encoded (structured recovery sends its frozen, canonical
    /// bytes unchanged on every attempt).
    ///
    /// - Parameters:
    ///   - encodedBody: The exact JSON body bytes.
    ///   - sessionID: Sent as `session_id`, if any.
    ///   - clientRequestID: Sent as `x-client-request-id`, if any.
    ///   - model: The model the body asks for, named in telemetry spans; `nil` leaves it out.
    /// - Returns: The events; iterate from one task.
    public func stream(encodedBody: [UInt8], sessionID: String? = nil, clientRequestID: String? = nil, model: String? = nil) -> ResponsesEventStream {
        ResponsesEventStream(client: self, body: encodedBody, model: model, sessionID: sessionID, clientRequestID: clientRequestID, interruption: nil)
    }

    /// The latest rate-limit snapshot per family seen on any response (error responses included) or
    /// `codex.rate_limits` event of requests sent with credentials of account `binding`, sorted by family;
    /// empty for an account that reported none (another account's limits are never returned).
    public func rateLimits(for binding: String) -> [AgentRateLimitSnapshot] {
        latest.withLock { ($0.limits[binding] ?? [:]).values.sorted { $0.limitID < $1.limitID } }
    }

    /// The `X-Models-Etag` of the latest response, if any.
    public var latestModelsETag: String? { latest.withLock { $0.modelsETag } }

    /// Records what a response or event of a request sent for account `binding` reported.
    func record(limits: [AgentRateLimitSnapshot], modelsETag: String?, binding: String?) {
        latest.withLock { state in
            if let binding {
                for snapshot in limits { state.limits[binding, default: [:]][snapshot.limitID] = snapshot }
            }
            if let modelsETag { state.modelsETag = modelsETag }
        }
    }
}
