/// What identifies a span across processes: the W3C Trace Context triple of trace ID, span ID and the
/// sampled flag. A host passes the context of its own span (``AgentTelemetry/withParent(_:operation:)``)
/// so a turn joins the host's trace.
public struct AgentSpanContext: Sendable, Hashable, CustomStringConvertible {
    /// The trace ID: 16 bytes, never all zero.
    public let traceID: [UInt8]
    /// The span ID: 8 bytes, never all zero.
    public let spanID: [UInt8]
    /// Whether the trace is sampled (the `01` flag). Spans under an unsampled parent are not recorded.
    public let isSampled: Bool

    /// A context from its parts; `nil` unless the IDs have the right lengths and are not all zero.
    public init?(traceID: [UInt8], spanID: [UInt8], isSampled: Bool = true) {
        guard traceID.count == 16, spanID.count == 8, traceID.contains(where: { $0 != 0 }), spanID.contains(where: { $0 != 0 }) else {
            return nil
        }
        self.traceID = traceID
        self.spanID = spanID
        self.isSampled = isSampled
    }

    /// Parses a W3C `traceparent` header (`00-<32 hex>-<16 hex>-<2 hex>`); `nil` for anything else
    /// (another version with more fields is read by its first four, as the recommendation says).
    public init?(traceparent: String) {
        let fields = traceparent.split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count >= 4, fields[0].count == 2, let version = Self.bytes(fromHex: fields[0]), version != [0xFF],
              version == [0] ? fields.count == 4 : true,
              let trace = Self.bytes(fromHex: fields[1]), trace.count == 16,
              let span = Self.bytes(fromHex: fields[2]), span.count == 8,
              fields[3].count == 2, let flags = Self.bytes(fromHex: fields[3]), let flag = flags.first
        else { return nil }
        self.init(traceID: trace, spanID: span, isSampled: flag & 1 == 1)
    }

    /// A new context in a new trace (random IDs).
    public static func newTrace() -> AgentSpanContext {
        AgentSpanContext(unchecked: SpanIDGenerator.bytes(16), spanID: SpanIDGenerator.bytes(8), isSampled: true)
    }

    /// A new span in this context's trace, with its sampled flag.
    public func child() -> AgentSpanContext {
        AgentSpanContext(unchecked: traceID, spanID: SpanIDGenerator.bytes(8), isSampled: isSampled)
    }

    /// The trace ID as 32 lowercase hex digits.
    public var traceIDHex: String { Self.hex(traceID) }
    /// The span ID as 16 lowercase hex digits.
    public var spanIDHex: String { Self.hex(spanID) }

    /// The `traceparent` header value for this span.
    public var traceparent: String { "00-\(traceIDHex)-\(spanIDHex)-\(isSampled ? "01" : "00")" }

    /// The `traceparent` form.
    public var description: String { traceparent }

    private init(unchecked traceID: [UInt8], spanID: [UInt8], isSampled: Bool) {
        self.traceID = traceID
        self.spanID = spanID
        self.isSampled = isSampled
    }

    /// Lowercase hex.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Bytes from lowercase hex, or `nil` (uppercase is refused, as Trace Context requires).
    static func bytes(fromHex text: Substring) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard !utf8.isEmpty, utf8.count.isMultiple(of: 2) else { return nil }
        func nibble(_ character: UInt8) -> UInt8? {
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
