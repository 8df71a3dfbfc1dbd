/// One complete HTTP request as the loopback server received it, recorded before the handler runs.
public struct RecordedRequest: Sendable, Hashable {
    /// The request method exactly as sent, for example `POST`.
    public let method: String
    /// The request path without the query, for example `/v1/responses`. An absolute-form target
    /// (`http://host/path`) is reduced to its path.
    public let path: String
    /// The raw query text after the first `?` (not percent-decoded); nil when the target has no `?`.
    public let query: String?
    /// The header lines in received order, names spelled as received.
    public let headers: [HTTPHeaderField]
    /// The body bytes: exactly `Content-Length` bytes, or the decoded payload of a chunked body.
    public let body: [UInt8]
    /// The 1-based number of the accepted connection that carried the request.
    public let connectionID: Int
    /// When the last byte of the request had been read.
    public let receivedAt: ContinuousClock.Instant

    /// Creates a recorded request; the server builds these, tests may build them to drive a handler directly.
    /// - Parameters:
    ///   - method: The request method.
    ///   - path: The path without query.
    ///   - query: The raw query text, nil for none.
    ///   - headers: The header lines in order.
    ///   - body: The body bytes.
    ///   - connectionID: The 1-based connection number.
    ///   - receivedAt: When the request was complete.
    public init(
        method: String,
        path: String,
        query: String?,
        headers: [HTTPHeaderField],
        body: [UInt8],
        connectionID: Int,
        receivedAt: ContinuousClock.Instant
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.connectionID = connectionID
        self.receivedAt = receivedAt
    }

    /// The value of the first header named `name`, compared ASCII case-insensitively; nil when absent.
    /// - Parameter name: The header name in any case.
    /// - Returns: The first matching header's value.
    public func header(_ name: String) -> String? {
        headers.firstValue(named: name)
    }
}
