import CodexCore

/// The Linux ``HTTPClient``: libcurl used directly (the engine FoundationNetworking itself is built on),
/// through one multi handle driven by the client's own thread.
///
/// - **Real back-pressure**: each response holds at most ``Configuration/maximumBufferedBytes`` (plus
///   one network chunk); when the consumer is behind, the transfer is paused (`CURL_WRITEFUNC_PAUSE`)
///   and TCP slows the sender down; it resumes once the consumer has read half of it. Memory follows the
///   buffer, whatever the sender does; nothing spills to disk.
/// - **Connection reuse**: the connection cache of the multi handle keeps keep-alive connections for
///   later requests; HTTP/2 is used when a TLS server offers it (streams multiplexed on one connection).
/// - **Timeouts** on the injected clock: connect, first byte, idle (stopped while paused: a slow
///   consumer is not a silent server) and total; the total timeout's error reaches the consumer at
///   once, not after the bytes already held.
/// - **Cancellation** (the caller's task, or the body's consumer) removes the transfer at once, which
///   closes its HTTP/1 connection — it is never handed to a later request.
/// - Redirects are not followed; interim `1xx` responses are skipped; the response head is bounded
///   (256 KiB, 1,000 fields); only `http` and `https`; TLS peer and host verification always on (the
///   system CA store); the usual proxy variables (`https_proxy`, `no_proxy`, …) are honoured as curl
///   does; failures are `transport_failure` with curl's error code in the interruption details (domain
///   `curl`), never the URL's query or a credential.
///
/// ```swift
/// let client = CurlHTTPClient()
/// let response = try await client.send(HTTPRequest(method: "GET", url: url))
/// for try await chunk in response.body { … }
/// ```
public final class CurlHTTPClient: HTTPClient {
    /// Options for the client.
    public struct Configuration: Sendable {
        /// The most body bytes held per response before the transfer is paused. Default 256 KiB; at
        /// least 16 KiB.
        public var maximumBufferedBytes: Int
        /// The most idle connections kept for reuse. Default 16; at least 1.
        public var maximumCachedConnections: Int
        /// The path of a PEM file of certificate authorities to trust instead of the system's store (a
        /// private CA in front of the service, or a test certificate). Peer and host-name verification
        /// stay on either way, and the system's authorities (its CA file and directory) are not consulted.
        /// Default `nil`: the system's CA store. A file that cannot be read fails each HTTPS request with
        /// `transport_failure`. A client keeps the authorities it read for up to a day (libcurl's cache):
        /// after replacing the file, create a new client.
        public var certificateAuthorityFile: String?

        /// Creates a configuration.
        public init(maximumBufferedBytes: Int = 256 * 1024, maximumCachedConnections: Int = 16, certificateAuthorityFile: String? = nil) {
            self.maximumBufferedBytes = max(16 * 1024, maximumBufferedBytes)
            self.maximumCachedConnections = max(1, maximumCachedConnections)
            self.certificateAuthorityFile = certificateAuthorityFile
        }
    }

    /// The client's options.
    public let configuration: Configuration
    /// Times every exchange of this client on its clock (one task, not one per request).
    private let deadlines: DeadlineScheduler
    private let engine: CurlEngine?
    private let setupFailure: AgentRuntimeError?

    /// Creates a client and starts its engine thread.
    ///
    /// - Parameters:
    ///   - configuration: Buffering and connection-cache options.
    ///   - clock: The clock timeouts are measured on. Default `ContinuousClock`.
    public init(configuration: Configuration = .init(), clock: any Clock<Duration> = ContinuousClock()) {
        self.configuration = configuration
        deadlines = DeadlineScheduler(timer: clock.makeElapsedTimer())
        do {
            engine = try CurlEngine(maximumConnections: configuration.maximumCachedConnections)
            setupFailure = nil
        } catch {
            engine = nil
            setupFailure = error as? AgentRuntimeError ?? AgentRuntimeError(.clientSetup("libcurl could not be set up"))
        }
    }

    deinit {
        // The engine finishes the transfers still running, then stops its thread.
        engine?.submit(.shutdown)
    }

    /// Sends the request; returns when the final response head arrives, with the body streaming.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `transport_failure`, `timed_out` or `invalid_request` (a
    ///   header with a line break), or `CancellationError`.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        guard let engine else { throw setupFailure ?? AgentRuntimeError(.clientSetup("libcurl could not be set up")) }
        let transfer = try CurlTransfer(
            request, engine: engine, bufferLimit: configuration.maximumBufferedBytes,
            certificateAuthorityFile: configuration.certificateAuthorityFile, deadlines: deadlines
        )
        transfer.startWatchdog()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in transfer.start(continuation) }
        } onCancel: {
            transfer.cancelBeforeHead()
        }
    }
}
