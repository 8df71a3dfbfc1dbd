/// What identifies a span across processes: the W3C Trace Context triple of trace ID, span ID and the
/// sampled flag. A host passes the context of its own span (``AgentTelemetry/withParent(_:operation:)``)
/// so a turn joins the host's trace.
public struct AgentSpanContext: Sendable, Hashable, CustomStringConvertible {
    /// The trace ID's first 8 bytes, big-endian.
    package let traceHigh: UInt64
    /// The trace ID's last 8 bytes, big-endian.
    package let traceLow: UInt64
    /// The span ID, big-endian.
    package let spanValue: UInt64
    /// Whether the trace is sampled (the `01` flag). Spans under an unsampled parent are not recorded.
    public let isSampled: Bool

    /// The trace ID: 16 bytes, never all zero.
    public var traceID: [UInt8] { Self.bytes(traceHigh) + Self.bytes(traceLow) }
    /// The span ID: 8 bytes, never all zero.
    public var spanID: [UInt8] { Self.bytes(spanValue) }

    /// A context from its parts; `nil` unless the IDs have the right lengths and are not all zero.
    public init?(traceID: [UInt8], spanID: [UInt8], isSampled: Bool = true) {
        guard traceID.count == 16, spanID.count == 8 else { return nil }
        let high = Self.word(traceID[0..<8])
        let low = Self.word(traceID[8..<16])
        let span = Self.word(spanID[0..<8])
        guard high != 0 || low != 0, span != 0 else { return nil }
        self.init(traceHigh: high, traceLow: low, spanValue: span, isSampled: isSampled)
    }

    package init(traceHigh: UInt64, traceLow: UInt64, spanValue: UInt64, isSampled: Bool) {
        self.traceHigh = traceHigh
        self.traceLow = traceLow
        self.spanValue = spanValue
        self.isSampled = isSampled
    }

    /// The 8 bytes of `value`, big-endian.
    package static func bytes(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> UInt64(56 - 8 * $0)) }
    }

    /// 8 bytes, big-endian, as a word.
    package static func word(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
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
        AgentSpanContext(traceHigh: SpanIDGenerator.next(), traceLow: SpanIDGenerator.next(), spanValue: SpanIDGenerator.next(), isSampled: true)
    }

    /// A new span in this context's trace, with its sampled flag.
    public func child() -> AgentSpanContext {
        AgentSpanContext(traceHigh: traceHigh, traceLow: traceLow, spanValue: SpanIDGenerator.next(), isSampled: isSampled)
    }

    /// The trace ID as 32 lowercase hex digits.
    public var traceIDHex: String { Self.hex(traceID) }
    /// The span ID as 16 lowercase hex digits.
    public var spanIDHex: String { Self.hex(spanID) }

    /// The `traceparent` header value for this span.
    public var traceparent: String { "00-\(traceIDHex)-\(spanIDHex)-\(isSampled ? "01" : "00")" }

    /// The `traceparent` form.
    public var description: String { traceparent }

    /// Lowercase hex (``SHA256/hexString(_:)``).
    public static func hex(_ bytes: [UInt8]) -> String {
        SHA256.hexString(bytes)
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
