/// A scripted HTTP response: status, headers and a sequence of body parts the loopback server plays back,
/// with pauses, indefinite holds and abrupt closes in between.
///
/// The server sends the status line and headers together with the first `.bytes` part, so a `.delay` or
/// `.hold` before any bytes delays the response head as well (use `.bytes([])` first to send the head
/// alone). Headers named `Content-Length` or `Transfer-Encoding` in `headers` are dropped: the server
/// writes its own according to `framing`.
public struct ScriptedReply: Sendable {
    /// How the server delimits the body on the wire.
    public enum Framing: Sendable {
        /// `Content-Length` equal to the total size of all `.bytes` parts, wherever they appear.
        case contentLength
        /// `Transfer-Encoding: chunked`; every non-empty `.bytes` part is one chunk, sent at once, and the
        /// terminating `0\r\n\r\n` follows the last part (unless `.closeAbruptly` ends the reply first).
        case chunked
        /// No length: `Connection: close` is sent and the server closes the connection after the body.
        case closeDelimited
        /// Nothing of the server's own: no status line, no headers, no framing. `.bytes` parts are written
        /// exactly as they are, so a test can send any malformed reply (a status line alone, headers
        /// without their blank line, interim 1xx responses, 10 MB of headers); the connection is closed
        /// after the last part.
        case raw
    }

    /// One step of the reply body.
    public enum Part: Sendable {
        /// Bytes written with one send (one chunk in `.chunked` framing).
        case bytes([UInt8])
        /// A pause before the next part; ends the connection early if the client closes meanwhile.
        case delay(Duration)
        /// A pause until `LoopbackHTTPServer.releaseHeld()` is called, the client closes the connection,
        /// or the server shuts down. A release counts if it happens after the request was recorded (or
        /// after this reply's previous `.hold` ended), even before the reply reaches this part.
        case hold
        /// Closes the socket at once with `SO_LINGER` 0, so the client sees a reset; later parts and the
        /// chunked terminator are never sent.
        case closeAbruptly
        /// Sends `bytes` (one chunk each in `.chunked` framing) over and over as fast as the client takes
        /// them, `times` times, or until the client closes when `times` is nil (an endless stream).
        case repeating([UInt8], times: Int?)
        /// Half-closes: sends a FIN (the client sees the end of the stream) and keeps reading until the
        /// client closes; later parts are never sent.
        case halfClose
    }

    /// The status code, for example 200.
    public var status: Int
    /// The reason phrase; nil picks the standard phrase for common codes (empty for unknown codes).
    public var reason: String?
    /// Response headers written in order after the status line.
    public var headers: [HTTPHeaderField]
    /// The body script.
    public var parts: [Part]
    /// The body framing.
    public var framing: Framing

    /// Creates a scripted reply.
    /// - Parameters:
    ///   - status: The status code.
    ///   - reason: The reason phrase, nil for the standard one.
    ///   - headers: Response headers, in order.
    ///   - parts: The body script.
    ///   - framing: How the body is delimited.
    public init(
        status: Int = 200,
        reason: String? = nil,
        headers: [HTTPHeaderField] = [],
        parts: [Part] = [],
        framing: Framing = .contentLength
    ) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.parts = parts
        self.framing = framing
    }

    /// A `Content-Length` reply carrying `text` as `application/json`.
    /// - Parameters:
    ///   - text: The JSON text, sent as UTF-8.
    ///   - status: The status code.
    ///   - headers: Extra headers after `Content-Type`; a `Content-Type` here replaces the default.
    /// - Returns: The reply.
    public static func json(_ text: String, status: Int = 200, headers: [HTTPHeaderField] = []) -> ScriptedReply {
        ScriptedReply(
            status: status,
            headers: withContentType("application/json", headers),
            parts: [.bytes(Array(text.utf8))]
        )
    }

    /// A server-sent-events reply: each element of `chunks` is written (and flushed) by its own send, as
    /// its own chunk in `.chunked` framing.
    /// - Parameters:
    ///   - chunks: The event-stream text pieces, sent as UTF-8 in order.
    ///   - delayBetween: A pause between consecutive pieces, nil for none.
    ///   - status: The status code.
    ///   - headers: Extra headers after `Content-Type`; a `Content-Type` here replaces the default.
    ///   - framing: The body framing, chunked by default.
    /// - Returns: The reply.
    public static func sse(
        _ chunks: [String],
        delayBetween: Duration? = nil,
        status: Int = 200,
        headers: [HTTPHeaderField] = [],
        framing: Framing = .chunked
    ) -> ScriptedReply {
        var parts: [Part] = []
        for (index, chunk) in chunks.enumerated() {
            if index > 0, let delayBetween { parts.append(.delay(delayBetween)) }
            parts.append(.bytes(Array(chunk.utf8)))
        }
        return ScriptedReply(
            status: status,
            headers: withContentType("text/event-stream; charset=utf-8", headers),
            parts: parts,
            framing: framing
        )
    }

    /// A `Content-Length` reply carrying `body` as `contentType`, written in sends of at most `writeSize`
    /// bytes (the shape of a recorded stream replayed at full speed).
    /// - Parameters:
    ///   - body: The body bytes.
    ///   - contentType: The `Content-Type` value.
    ///   - writeSize: The most bytes one send carries; values below 1 count as 1.
    /// - Returns: The reply.
    public static func body(_ body: [UInt8], contentType: String, writeSize: Int) -> ScriptedReply {
        let size = max(1, writeSize)
        let parts: [Part] = stride(from: 0, to: body.count, by: size).map { start in
            .bytes(Array(body[start..<min(body.count, start + size)]))
        }
        return ScriptedReply(headers: [HTTPHeaderField(name: "Content-Type", value: contentType)], parts: parts)
    }

    /// A `Content-Length` reply carrying `text` as `text/plain; charset=utf-8`.
    /// - Parameters:
    ///   - text: The body text, sent as UTF-8.
    ///   - status: The status code.
    ///   - headers: Extra headers after `Content-Type`; a `Content-Type` here replaces the default.
    /// - Returns: The reply.
    public static func text(_ text: String, status: Int = 200, headers: [HTTPHeaderField] = []) -> ScriptedReply {
        ScriptedReply(
            status: status,
            headers: withContentType("text/plain; charset=utf-8", headers),
            parts: [.bytes(Array(text.utf8))]
        )
    }

    /// `headers` preceded by `Content-Type: contentType`, unless `headers` already names a content type.
    private static func withContentType(_ contentType: String, _ headers: [HTTPHeaderField]) -> [HTTPHeaderField] {
        if headers.firstValue(named: "Content-Type") != nil { return headers }
        return [HTTPHeaderField(name: "Content-Type", value: contentType)] + headers
    }
}
