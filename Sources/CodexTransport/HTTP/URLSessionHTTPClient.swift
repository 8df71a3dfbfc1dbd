import CodexCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The production ``HTTPClient``: Foundation's `URLSession`, streaming through
/// `URLSessionDataDelegate` (FoundationNetworking has no `bytes(for:)`) into a ``BoundedByteBuffer``.
///
/// One long-lived session per client (its connection cache reuses keep-alive connections), whose
/// delegate routes each task's callbacks to that request's own buffer, limits and timeouts. The body is
/// held in memory up to
/// ``Configuration/maximumBufferedBytes``; a consumer further behind has the rest spilled to an unlinked
/// temporary file (FoundationNetworking cannot pause a transfer, see ``BoundedByteBuffer``). Redirects are not followed. Timeouts are enforced by a watchdog on the injected clock, and
/// the idle timeout is also set as the request's `timeoutInterval`.
///
/// ```swift
/// let client = URLSessionHTTPClient()
/// let response = try await client.send(HTTPRequest(method: "GET", url: url))
/// for try await chunk in response.body { … }
/// ```
public final class URLSessionHTTPClient: HTTPClient {
    /// Options for the client.
    public struct Configuration: Sendable {
        /// The most body bytes held in memory per response; beyond it they go to disk. Default 256 KiB
        /// (sixteen of FoundationNetworking's 16 KiB deliveries); at least 16 KiB.
        public var maximumBufferedBytes: Int
        /// The most body bytes held on disk per response before it fails with `response_too_large`.
        /// Default 256 MiB; 0 fails as soon as the memory limit is passed.
        public var maximumSpilledBytes: Int
        /// Where spill files are created. Default: the temporary directory (`TMPDIR`).
        public var spillDirectory: String?
        /// Called for every buffer created (for tests and diagnostics).
        public var bufferObserver: (@Sendable (BoundedByteBuffer) -> Void)?

        /// Creates a configuration.
        public init(
            maximumBufferedBytes: Int = 256 * 1024, maximumSpilledBytes: Int = BoundedByteBuffer.defaultSpillLimit,
            spillDirectory: String? = nil, bufferObserver: (@Sendable (BoundedByteBuffer) -> Void)? = nil
        ) {
            self.maximumBufferedBytes = max(16 * 1024, maximumBufferedBytes)
            self.maximumSpilledBytes = max(0, maximumSpilledBytes)
            self.spillDirectory = spillDirectory
            self.bufferObserver = bufferObserver
        }
    }

    private let configuration: Configuration
    /// Times every exchange of this client on its clock (one task, not one per request).
    private let deadlines: DeadlineScheduler
    private let router = SessionDelegateRouter()
    private let session: URLSession

    /// Creates a client with one long-lived session (its connections are reused by later requests).
    ///
    /// - Parameters:
    ///   - configuration: Buffering options.
    ///   - clock: The clock timeouts are measured on. Default `ContinuousClock`.
    public init(configuration: Configuration = .init(), clock: any Clock<Duration> = ContinuousClock()) {
        self.configuration = configuration
        deadlines = DeadlineScheduler(timer: clock.makeElapsedTimer())
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        // Each request sets its own (backstop) timeout; this one must never be shorter.
        sessionConfiguration.timeoutIntervalForRequest = 7 * 24 * 3600
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.urlCache = nil
        sessionConfiguration.httpCookieStorage = nil
        // Streams stay open for minutes: the default of six per host would queue a seventh turn.
        sessionConfiguration.httpMaximumConnectionsPerHost = 256
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: sessionConfiguration, delegate: router, delegateQueue: queue)
    }

    deinit {
        // Cancels what is still running and releases the session (its connections and multi handle).
        session.invalidateAndCancel()
    }

    /// Sends the request; returns when the response headers arrive.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for field in request.headers.fields { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
        if let body = request.body { urlRequest.httpBody = Data(body) }
        // The watchdog enforces the exact timeouts on the injected clock. FoundationNetworking's own
        // timeout (whole seconds only) is only a backstop for a watchdog that never ran, so it is set
        // well past the idle timeout: it must never fire first, however late the watchdog is scheduled.
        let idleBackstop = request.timeouts.idle.inSeconds.rounded(.up) + 60
        urlRequest.timeoutInterval = idleBackstop

        let delegate = StreamingTaskDelegate(
            limit: configuration.maximumBufferedBytes, spillLimit: configuration.maximumSpilledBytes, spillDirectory: configuration.spillDirectory,
            hasBody: request.body != nil, timeouts: request.timeouts, deadlines: deadlines
        )
        configuration.bufferObserver?(delegate.buffer)
        let task = session.dataTask(with: urlRequest)
        router.register(delegate, for: task)
        delegate.attach(task: task)

        delegate.watchdog.start { kind, error in delegate.expire(kind, error) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if delegate.start(continuation: continuation) { task.resume() }
            }
        } onCancel: {
            delegate.cancelBeforeHeaders()
        }
    }
}
