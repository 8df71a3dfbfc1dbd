/// Protocol Buffers' binary wire format, written front to back into bytes: tags, varints,
/// fixed-width numbers and length-delimited fields.
///
/// A nested message's length comes before its content but is known only once the content is written,
/// so one byte is kept for it; the rare message of 128 bytes or more moves right by the varint's extra
/// bytes. The writer writes what it is told, in that order: a caller that gives fields in field-number
/// order and leaves out default values (zero numbers, empty strings and lists) produces exactly what
/// protobuf's own serializers produce.
struct ProtobufWriter {
    /// The wire types OTLP's messages use.
    enum WireType: UInt64 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
    }

    /// The bytes written so far.
    private(set) var bytes: [UInt8] = []

    /// A writer whose buffer has room for `capacity` bytes.
    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// A field's key: its number and wire type, as a varint.
    @inline(__always)
    mutating func tag(_ field: UInt64, _ wireType: WireType) {
        varint(field << 3 | wireType.rawValue)
    }

    /// `value` seven bits a byte, lowest first, the high bit set on every byte but the last.
    @inline(__always)
    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// A varint field (`int64`, `uint32`, `bool`, an enum); a negative `int64` is its two's complement.
    mutating func varintField(_ field: UInt64, _ value: UInt64) {
        tag(field, .varint)
        varint(value)
    }

    /// A `fixed64`, `sfixed64` or `double` field (as its bit pattern), little-endian.
    mutating func fixed64Field(_ field: UInt64, _ value: UInt64) {
        tag(field, .fixed64)
        appendLittleEndian(value)
    }

    /// A `string` field.
    mutating func stringField(_ field: UInt64, _ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            tag(field, .lengthDelimited)
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// A `bytes` field of 8 bytes: `word` big-endian (a span ID).
    mutating func bigEndianField(_ field: UInt64, _ word: UInt64) {
        tag(field, .lengthDelimited)
        bytes.append(8)
        withUnsafeBytes(of: word.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// A `bytes` field of 16 bytes: `high`, then `low`, each big-endian (a trace ID).
    mutating func bigEndianField(_ field: UInt64, _ high: UInt64, _ low: UInt64) {
        tag(field, .lengthDelimited)
        bytes.append(16)
        withUnsafeBytes(of: high.bigEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: low.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// A packed repeated `fixed64` or `double` (as bit patterns) field; nothing for an empty list.
    mutating func packedFixed64Field(_ field: UInt64, _ values: some Collection<UInt64>) {
        guard !values.isEmpty else { return }
        tag(field, .lengthDelimited)
        varint(UInt64(values.count * 8))
        for value in values { appendLittleEndian(value) }
    }

    /// A nested message field whose content `body` writes.
    mutating func messageField(_ field: UInt64, _ body: (inout ProtobufWriter) -> Void) {
        tag(field, .lengthDelimited)
        let lengthAt = bytes.count
        bytes.append(0)
        body(&self)
        let length = bytes.count - lengthAt - 1
        if length < 0x80 {
            bytes[lengthAt] = UInt8(length)
            return
        }
        var extra = 0
        var rest = length >> 7
        while rest > 0 {
            extra += 1
            rest >>= 7
        }
        bytes.insert(contentsOf: repeatElement(0, count: extra), at: lengthAt + 1)
        var value = UInt64(length)
        var at = lengthAt
        while value >= 0x80 {
            bytes[at] = UInt8(truncatingIfNeeded: value) | 0x80
            value >>= 7
            at += 1
        }
        bytes[at] = UInt8(value)
    }

    @inline(__always)
    private mutating func appendLittleEndian(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
