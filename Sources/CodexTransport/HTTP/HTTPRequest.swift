public import Foundation

/// Separate, configurable timeouts for one request.
///
/// - ``connect``: until the request is on the wire (its body sent, or response headers for bodiless requests).
/// - ``firstByte``: until the response headers arrive.
/// - ``idle``: the longest gap between body chunks (the stream idle timeout); also set as the
///   request's own `timeoutInterval`.
/// - ``total``: an optional deadline for the whole exchange, body included.
public struct HTTPTimeouts: Sendable, Hashable {
    /// Until the request is sent. Default 30 s.
    public var connect: Duration
    /// Until response headers. Default 300 s.
    public var firstByte: Duration
    /// Between body chunks (`streamIdleTimeout`). Default 300 s.
    public var idle: Duration
    /// The whole exchange, or `nil` for no deadline (the default).
    public var total: Duration?

    /// Creates timeouts; non-positive durations are raised to 1 ms.
    public init(connect: Duration = .seconds(30), firstByte: Duration = .seconds(300), idle: Duration = .seconds(300), total: Duration? = nil) {
        let minimum = Duration.milliseconds(1)
        self.connect = max(connect, minimum)
        self.firstByte = max(firstByte, minimum)
        self.idle = max(idle, minimum)
        self.total = total.map { max($0, minimum) }
    }
}

/// One HTTP request.
public struct HTTPRequest: Sendable, Hashable {
    /// `GET`, `POST`, …
    public var method: String
    /// The full URL.
    public var url: URL
    /// Request headers.
    public var headers: HTTPHeaders
    /// The body bytes, if any.
    public var body: [UInt8]?
    /// Timeouts.
    public var timeouts: HTTPTimeouts

    /// Creates a request.
    public init(method: String, url: URL, headers: HTTPHeaders = [:], body: [UInt8]? = nil, timeouts: HTTPTimeouts = .init()) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeouts = timeouts
    }
}

extension HTTPRequest {
    /// The URL's path without its query: what logs may show of it.
    var urlPath: String { url.path }

    /// The server the request goes to, as errors may name it: `scheme://host:port` (the scheme's default
    /// port when the URL has none), never a user, password, path, query or fragment.
    package var origin: String? { Self.origin(of: url) }

    /// ``origin`` of `url`.
    package static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(shownHost)" + (port.map { ":\($0)" } ?? "")
    }
}
