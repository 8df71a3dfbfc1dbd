package import CodexCore

/// Every failure CodexTransport makes itself, as one vocabulary, and the one place it becomes the public
/// ``CodexCore/AgentRuntimeError`` (``CodexCore/AgentRuntimeError/init(_:)``): its stable code, its
/// log-safe message, its interruption details and its cause. Errors of the service (an HTTP status, a
/// `response.failed` event) are mapped by ``ResponsesErrorMapper``; everything else the module throws
/// is one of these.
///
/// Messages never contain a URL path or query, a header value, a credential or a byte of a body.
package enum TransportError: Sendable {
    // MARK: Endpoints and requests (`invalid_endpoint`, `invalid_request`)

    /// An endpoint URL that cannot be used; `reason` says why.
    case invalidEndpoint(reason: String)
    /// A request header whose name is not a token or whose value has a line break.
    case invalidHeader

    // MARK: The connection (`transport_failure`, `timed_out`)

    /// libcurl or its transfer could not be set up (`what`: "libcurl could not be initialised", …).
    case clientSetup(String)
    /// The connection failed with a transport's own code: `detail` is its generic text; `origin` the
    /// server's scheme, host and port (``HTTPRequest/origin``), never a path, query or credential.
    case connectionFailed(detail: String, domain: String, code: Int, origin: String? = nil)
    /// The connection failed and the transport gave no code of its own.
    case connectionFailedWithoutCode(underlying: any Error & Sendable)
    /// The connection ended before a response head arrived.
    case endedBeforeHead(domain: String, code: Int, origin: String? = nil)
    /// The response head broke a limit (`what`: "is larger than 1048576 bytes", …).
    case responseHead(String, domain: String? = nil, code: Int? = nil)
    /// The body's `Content-Encoding` was not offered, or the body is not valid in it.
    case contentEncoding(coding: String, offered: Bool, curlCode: Int)
    /// URLSession reported an interim (1xx) status as the final one.
    case interimResponse(status: Int)
    /// The exchange ended without a response.
    case noResponse
    /// The connection closed before the reply, and the body cannot be sent again.
    case cannotResendBody
    /// URLSession's own timeout passed.
    case requestTimedOut(domain: String, code: Int)
    /// A timeout of the exchange passed (`kind`: connect, first-byte, idle, total).
    case timeout(kind: String, limit: Duration)

    // MARK: Sizes (`response_too_large`, `sse_event_too_large`)

    /// A body longer than what its reader would take.
    case bodyTooLarge(limit: Int)
    /// A body further ahead of its reader than the buffer and its spill file hold.
    case bodyAheadOfReader(limit: Int)
    /// An encoded body that decoded past what the client holds for a paused reader.
    case decompressionBomb(coding: String, domain: String, code: Int)
    /// A server-sent event over the limit.
    case eventTooLarge(limit: Int, byteOffset: Int)

    // MARK: The Responses stream (`responses_stream_disconnected`, `responses_event_malformed`, `provider_error`)

    /// The stream ended before `response.completed`.
    case streamEnded(AgentRuntimeError.InterruptionDetails?)
    /// The connection was lost before `response.completed`.
    case connectionLost(AgentRuntimeError.InterruptionDetails?, underlying: any Error & Sendable)
    /// A reply the module cannot read (`what` says which and why); `byteOffset` in the stream, when known.
    case malformed(String, byteOffset: Int? = nil, underlying: (any Error & Sendable)? = nil)
    /// `response.failed` without an error the mapper recognised.
    case responseFailed

    // MARK: Sign-in and credentials

    /// Nobody is signed in (`what`: which session or file).
    case notSignedIn(String)
    /// The session was replaced or signed out while it was in use.
    case sessionReplaced(String)
    /// The session belongs to another account than the one bound.
    case accountMismatch(String)
    /// The session's refresh token is no longer accepted.
    case refreshRefused(status: Int, providerCode: String?)
    /// An issuer's answer that is not the expected one; `retryable` when asking again may succeed.
    case issuer(String, status: Int? = nil, providerCode: String? = nil, retryable: Bool = false)
    /// Device-code sign-in is not enabled on the issuer.
    case deviceCodeUnavailable
    /// The device code was not approved in time.
    case deviceCodeExpired
    /// The secure store or a credentials file failed; `errno` when the system gave one.
    case secureStore(String, errno: Int32? = nil, underlying: (any Error & Sendable)? = nil)
    /// A configured credential or setting that no request can carry (a line break in an API key); the
    /// text names the setting, never its value.
    case unusableSetting(String)

    // MARK: Local storage and compaction

    /// The spill file of a response body failed.
    case spillFile(String, errno: Int32)
    /// A compaction reply that would lose or plant history.
    case compactionInvalid(String)
}

extension AgentRuntimeError {
    /// The public error of a CodexTransport failure: the one mapping point of the module's own failures.
    package init(_ failure: TransportError) {
        switch failure {
        case .invalidEndpoint(let reason):
            self.init(code: .invalidEndpoint, message: reason)
        case .invalidHeader:
            self.init(code: .invalidRequest, message: "a request header has an invalid name or a line break in its value")
        case .clientSetup(let what):
            self.init(code: .transportFailure, message: what)
        case .connectionFailed(let detail, let domain, let code, let origin):
            self.init(
                code: .transportFailure, message: "the connection\(Self.to(origin)) failed (\(detail))", interruption: .init(transportDomain: domain, transportCode: code)
            )
        case .connectionFailedWithoutCode(let underlying):
            self.init(code: .transportFailure, message: "the connection failed", underlying: underlying)
        case .endedBeforeHead(let domain, let code, let origin):
            self.init(
                code: .transportFailure, message: "the connection\(Self.to(origin)) ended before a response head",
                interruption: .init(transportDomain: domain, transportCode: code)
            )
        case .responseHead(let what, let domain, let code):
            self.init(code: .transportFailure, message: "the response head \(what)", interruption: Self.interruption(domain, code))
        case .contentEncoding(let coding, let offered, let curlCode):
            self.init(
                code: .transportFailure,
                message: offered
                    ? "the response body is not valid \(coding) (curl error \(curlCode))"
                    : "the response's Content-Encoding \(coding) is not one the client offered (gzip, deflate, br, zstd)",
                interruption: .init(transportDomain: "curl", transportCode: curlCode)
            )
        case .interimResponse(let status):
            self.init(
                code: .transportFailure, message: "the server sent an interim \(status) response, which URLSession reports instead of the final one",
                interruption: .init(transportDomain: "URLSession", transportCode: status)
            )
        case .noResponse:
            self.init(code: .transportFailure, message: "the request ended without a response")
        case .cannotResendBody:
            self.init(code: .transportFailure, message: "the connection closed before the reply, and the request body cannot be sent again on a new connection")
        case .requestTimedOut(let domain, let code):
            self.init(code: .timedOut, message: "the request timed out", interruption: .init(transportDomain: domain, transportCode: code))
        case .timeout(let kind, let limit):
            self.init(code: .timedOut, message: "the \(kind) timeout of \(limit) passed")
        case .bodyTooLarge(let limit):
            self.init(code: .responseTooLarge, message: "the response body exceeds \(limit) bytes")
        case .bodyAheadOfReader(let limit):
            self.init(code: .responseTooLarge, message: "the response body is more than \(limit) bytes ahead of its reader")
        case .decompressionBomb(let coding, let domain, let code):
            self.init(
                code: .responseTooLarge,
                message: "the \(coding) response body expanded past the 64 MiB the client holds for a paused reader (a compression bomb)",
                interruption: .init(transportDomain: domain, transportCode: code)
            )
        case .eventTooLarge(let limit, let byteOffset):
            self.init(code: .sseEventTooLarge, message: "a server-sent event exceeds the limit of \(limit) bytes", byteOffset: byteOffset)
        case .streamEnded(let interruption):
            self.init(code: .responsesStreamDisconnected, message: "the stream ended before response.completed", interruption: interruption)
        case .connectionLost(let interruption, let underlying):
            self.init(
                code: .responsesStreamDisconnected, message: "the connection was lost before response.completed", interruption: interruption,
                underlying: underlying
            )
        case .malformed(let what, let byteOffset, let underlying):
            self.init(code: .responsesEventMalformed, message: what, byteOffset: byteOffset, underlying: underlying)
        case .responseFailed:
            self.init(code: .providerError, message: "the response failed")
        case .notSignedIn(let what):
            self.init(code: .notSignedIn, message: what)
        case .sessionReplaced(let what):
            self.init(code: .sessionReplaced, message: what)
        case .accountMismatch(let what):
            self.init(code: .accountMismatch, message: what)
        case .refreshRefused(let status, let providerCode):
            self.init(
                code: .refreshFailed, message: "the session can no longer be refreshed (\(providerCode ?? "unauthorized")); sign in again",
                http: .init(statusCode: status, providerCode: providerCode)
            )
        case .issuer(let what, let status, let providerCode, let retryable):
            self.init(
                code: .providerError, message: what, http: status.map { .init(statusCode: $0, providerCode: providerCode) },
                retry: retryable ? .init(attempt: 1, maximumAttempts: 1, isRetryable: true, safety: .beforeOutput) : nil
            )
        case .deviceCodeUnavailable:
            self.init(code: .deviceCodeUnavailable, message: "device-code sign-in is not enabled on this issuer")
        case .deviceCodeExpired:
            self.init(code: .deviceCodeExpired, message: "the device code was not approved within 15 minutes")
        case .unusableSetting(let what):
            self.init(code: .invalidConfiguration, message: what)
        case .secureStore(let what, let errno, let underlying):
            // The system's words too: "errno 13" alone sends the reader to a table.
            self.init(code: .secureStoreFailure, message: what + (errno.map { ": \(BoundedInputFile.Failure.reason($0)) (errno \($0))" } ?? ""), underlying: underlying)
        case .spillFile(let what, let errno):
            self.init(code: .storageFailure, message: "\(what) (errno \(errno))")
        case .compactionInvalid(let what):
            self.init(code: .compactionInvalid, message: what)
        }
    }

    /// ` to https://host:443`, or nothing without an origin.
    private static func to(_ origin: String?) -> String {
        origin.map { " to " + $0 } ?? ""
    }

    private static func interruption(_ domain: String?, _ code: Int?) -> InterruptionDetails? {
        guard let domain, let code else { return nil }
        return InterruptionDetails(transportDomain: domain, transportCode: code)
    }
}
