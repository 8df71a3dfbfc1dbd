public import CodexCore

/// Logs each HTTP exchange, log-safe: `network.response.received` (debug) with the method, path,
/// status, duration and the server's `x-request-id` (scrubbed of the request's credentials), or
/// `network.request.failed` (notice) with the error code. Never headers, query strings or bodies.
public struct HTTPLoggingMiddleware: HTTPMiddleware {
    private let logSink: any AgentLogSink
    private let clock: any Clock<Duration>

    /// Creates the step.
    ///
    /// - Parameters:
    ///   - logSink: Receives the events.
    ///   - clock: Measures each exchange's duration (to its response headers).
    public init(logSink: any AgentLogSink, clock: any Clock<Duration> = ContinuousClock()) {
        self.logSink = logSink
        self.clock = clock
    }

    /// Sends the request and logs the outcome.
    public func intercept(_ request: HTTPRequest, context: HTTPMiddlewareContext, next: HTTPMiddlewareNext) async throws -> HTTPResponse {
        var metadata = ["method": request.method, "path": request.urlPath]
        let elapsed = Self.startTimer(clock)
        do {
            let response = try await next(request)
            metadata["duration_ms"] = String(Int(elapsed().inSeconds * 1000))
            metadata["status"] = String(response.statusCode)
            // A server can put anything in it, the credential it was sent included.
            if let requestID = response.headers["x-request-id"] { metadata["request_id"] = SecretRedactor(secrets: context.secrets).redact(requestID) }
            logSink.record(AgentLogEvent(level: .debug, category: .network, name: "network.response.received", metadata: metadata))
            return response
        } catch {
            metadata["duration_ms"] = String(Int(elapsed().inSeconds * 1000))
            metadata["error_code"] = (error as? AgentRuntimeError)?.code.rawValue ?? (error is CancellationError ? "cancelled" : "unknown")
            logSink.record(AgentLogEvent(level: .notice, category: .network, name: "network.request.failed", metadata: metadata))
            throw error
        }
    }

    /// The time since now on `clock`, as a function.
    private static func startTimer<C: Clock>(_ clock: C) -> () -> Duration where C.Duration == Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }
}
