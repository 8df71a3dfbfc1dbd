import Foundation

/// The binary history row form: a marker byte, a kind byte, then the item's fields in a fixed order.
///
/// Field encodings: a count or length is an unsigned LEB128 varint; a string is its UTF-8 length and
/// bytes; an optional string is its length plus one, or `0` when absent; a date is the IEEE 754 bit
/// pattern of its seconds since the reference date, 8 bytes little-endian (bit for bit what `Date`
/// holds); a flag is one byte, `0` or `1`. Rows written before this form are compact JSON objects, which
/// always start with `{`, so the first byte tells the two apart.
enum StorageRowFormat {
    /// The first byte of a binary row (version 1 of the form).
    static let binaryMarker: UInt8 = 0x01
    /// The first byte of a compact JSON row.
    static let jsonMarker = UInt8(ascii: "{")

    /// Kind bytes.
    enum Kind {
        static let message: UInt8 = 1
        static let toolCall: UInt8 = 2
        static let toolResult: UInt8 = 3
        static let reasoning: UInt8 = 4
        static let systemEvent: UInt8 = 5
        static let compaction: UInt8 = 6
        /// A system event followed by its memory application (the Codable JSON, as an optional byte
        /// field that must be present).
        static let systemEventWithMemory: UInt8 = 7
    }
}

/// Appends the fields of one binary row.
struct StorageRowWriter {
    private(set) var bytes: [UInt8] = []

    init(kind: UInt8, capacity: Int) {
        bytes.reserveCapacity(capacity)
        bytes.append(StorageRowFormat.binaryMarker)
        bytes.append(kind)
    }

    mutating func count(_ value: Int) {
        var rest = UInt64(value)
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func string(_ text: String) {
        count(text.utf8.count)
        bytes.append(contentsOf: text.utf8)
    }

    mutating func optionalString(_ text: String?) {
        guard let text else { return count(0) }
        count(text.utf8.count + 1)
        bytes.append(contentsOf: text.utf8)
    }

    mutating func optionalBytes(_ data: [UInt8]?) {
        guard let data else { return count(0) }
        count(data.count + 1)
        bytes.append(contentsOf: data)
    }

    mutating func flag(_ value: Bool) { bytes.append(value ? 1 : 0) }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func date(_ date: Date) {
        var bits = date.timeIntervalSinceReferenceDate.bitPattern
        for _ in 0..<8 {
            bytes.append(UInt8(truncatingIfNeeded: bits))
            bits >>= 8
        }
    }
}

/// Reads the fields of one binary row, in order; every read checks the row's bounds and every string
/// is validated UTF-8, so a damaged row is an error, never a crash or a repaired string.
struct StorageRowReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var offset: Int

    /// A reader positioned after the marker byte.
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        offset = 1
    }

    private static func damaged() -> AgentRuntimeError {
        AgentRuntimeError(code: .storageFailure, message: "a stored history item is damaged")
    }

    mutating func byte() throws(AgentRuntimeError) -> UInt8 {
        guard offset < bytes.count else { throw Self.damaged() }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func count() throws(AgentRuntimeError) -> Int {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            value |= UInt64(next & 0x7F) << shift
            if next & 0x80 == 0 { break }
            shift += 7
            guard shift < 63 else { throw Self.damaged() }
        }
        // No count can exceed the row itself.
        guard value <= UInt64(bytes.count) else { throw Self.damaged() }
        return Int(value)
    }

    private mutating func slice(_ length: Int) throws(AgentRuntimeError) -> UnsafeBufferPointer<UInt8> {
        guard length <= bytes.count - offset else { throw Self.damaged() }
        defer { offset += length }
        return UnsafeBufferPointer(rebasing: bytes[offset..<(offset + length)])
    }

    private mutating func text(_ length: Int, reusing known: String?) throws(AgentRuntimeError) -> String {
        let bytes = try slice(length)
        if var known, known.utf8.count == length, known.withUTF8({ Self.equal($0, bytes) }) { return known }
        // ASCII is valid UTF-8 as it stands (the common case, checked 8 bytes at a time); anything else is
        // validated, and refused rather than repaired.
        if Self.isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw Self.damaged() }
        return text
    }

    private static func equal(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let left = lhs.baseAddress, let right = rhs.baseAddress else { return lhs.count == rhs.count }
        return lhs.count == rhs.count && memcmp(left, right, lhs.count) == 0
    }

    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var offset = 0
        var high: UInt64 = 0
        while offset + 8 <= bytes.count {
            high |= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < bytes.count {
            high |= UInt64(bytes[offset])
            offset += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// A string; when its bytes are those of `known`, `known` itself (no copy).
    mutating func string(reusing known: String? = nil) throws(AgentRuntimeError) -> String {
        try text(try count(), reusing: known)
    }

    /// An optional string; when its bytes are those of `known`, `known` itself (no copy).
    mutating func optionalString(reusing known: String? = nil) throws(AgentRuntimeError) -> String? {
        let length = try count()
        return length == 0 ? nil : try text(length - 1, reusing: known)
    }

    mutating func optionalBytes() throws(AgentRuntimeError) -> [UInt8]? {
        let length = try count()
        return length == 0 ? nil : Array(try slice(length - 1))
    }

    mutating func flag() throws(AgentRuntimeError) -> Bool {
        switch try byte() {
        case 0: return false
        case 1: return true
        default: throw Self.damaged()
        }
    }

    mutating func date() throws(AgentRuntimeError) -> Date {
        let raw = try slice(8)
        var bits: UInt64 = 0
        for index in (0..<8).reversed() { bits = bits << 8 | UInt64(raw[index]) }
        let seconds = Double(bitPattern: bits)
        // A `Date` never holds NaN or infinity (a NaN date is not even equal to itself), and a store
        // keeps no date past year 9999: such bits are damage, not a date.
        guard let date = StoredDate.date(sinceReferenceDate: seconds) else { throw Self.damaged() }
        return date
    }

    /// Checks that the whole row was read.
    func finish() throws(AgentRuntimeError) {
        guard offset == bytes.count else { throw Self.damaged() }
    }
}
