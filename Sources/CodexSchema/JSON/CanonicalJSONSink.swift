/// The byte-level rules of canonical JSON, written into a fixed 64 KiB buffer that is handed to a
/// consumer whenever it fills: minimal string escapes (only `"`, `\` and control characters), numbers
/// in their ``JSONNumber/canonicalText``, and the UTF-8 byte order of object keys. The writer over
/// values (``JSONValue/canonicalBytes()``) and the writer over parse tapes
/// (``JSONDocument/canonicalBytes()``) both write through it, so their bytes cannot drift apart; the
/// OTLP encoder in CodexRuntime writes its export requests through it too.
package struct CanonicalJSONSink: ~Copyable {
    static let chunkBytes = 64 * 1024

    private let storage: UnsafeMutableBufferPointer<UInt8>
    private var count = 0
    private let consume: (UnsafeBufferPointer<UInt8>) -> Void

    private init(consume: @escaping (UnsafeBufferPointer<UInt8>) -> Void) {
        storage = .allocate(capacity: Self.chunkBytes)
        self.consume = consume
    }

    deinit { storage.deallocate() }

    /// Runs `body` with a sink whose chunks go to `consume`, in order; the rest is handed over when
    /// `body` returns.
    package static func write(to consume: (UnsafeBufferPointer<UInt8>) -> Void, _ body: (inout CanonicalJSONSink) -> Void) {
        withoutActuallyEscaping(consume) { consume in
            var sink = CanonicalJSONSink(consume: consume)
            body(&sink)
            sink.flush()
        }
    }

    private mutating func flush() {
        guard count > 0 else { return }
        consume(UnsafeBufferPointer(rebasing: storage[..<count]))
        count = 0
    }

    @inline(__always)
    package mutating func byte(_ byte: UInt8) {
        if count == storage.count { flush() }
        storage[count] = byte
        count += 1
    }

    /// Bytes written as they are; a run of half a chunk or more goes to the consumer without a copy.
    package mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        if bytes.count > storage.count - count {
            flush()
            if bytes.count >= storage.count / 2 {
                consume(bytes)
                return
            }
        }
        guard let source = bytes.baseAddress, let target = storage.baseAddress else { return }
        (target + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    package mutating func ascii(_ text: StaticString) {
        bytes(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A string's UTF-8 content in quotes, with `"`, `\` and control characters escaped. Pass
    /// `needsNoEscapes` when the content is known to hold none of them (a string parsed without escapes).
    package mutating func string(_ content: UnsafeBufferPointer<UInt8>, needsNoEscapes: Bool = false) {
        byte(UInt8(ascii: "\""))
        if needsNoEscapes {
            bytes(content)
        } else {
            var runStart = 0
            while true {
                let next = Self.firstEscape(in: content, from: runStart)
                bytes(UnsafeBufferPointer(rebasing: content[runStart..<next]))
                guard next < content.count else { break }
                escape(content[next])
                runStart = next + 1
            }
        }
        byte(UInt8(ascii: "\""))
    }

    /// The offset of the first byte at or after `start` that must be escaped (`"`, `\\` or a control
    /// character), or `content.count`. Eight bytes are tested at a time: for a word `x`,
    /// `(x - 0x0101…01 × n) & ~x & 0x8080…80` is non-zero exactly when some byte of `x` is below `n`
    /// (n ≤ 128), and a byte equal to `c` is a zero byte of `x ^ (0x0101…01 × c)`. A word with a hit is
    /// then read byte by byte.
    package static func firstEscape(in content: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var offset = start
        let count = content.count
        if let base = content.baseAddress {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            while offset + 8 <= count {
                let word = UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self)
                let quote = word ^ (ones &* 0x22)
                let backslash = word ^ (ones &* 0x5C)
                let hits = ((word &- ones &* 0x20) & ~word) | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
                if hits & highs != 0 { break }
                offset += 8
            }
        }
        while offset < count {
            let byte = content[offset]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C { return offset }
            offset += 1
        }
        return count
    }

    private mutating func escape(_ character: UInt8) {
        byte(UInt8(ascii: "\\"))
        switch character {
        case 0x22: byte(0x22)
        case 0x5C: byte(0x5C)
        case 0x08: byte(UInt8(ascii: "b"))
        case 0x0C: byte(UInt8(ascii: "f"))
        case 0x0A: byte(UInt8(ascii: "n"))
        case 0x0D: byte(UInt8(ascii: "r"))
        case 0x09: byte(UInt8(ascii: "t"))
        default:
            ascii("u00")
            byte(Self.hexDigit(character >> 4))
            byte(Self.hexDigit(character & 0x0F))
        }
    }

    /// The 16 lowercase hex digits of `word`, most significant first (no quotes).
    package mutating func hex(_ word: UInt64) {
        if storage.count - count < 16 { flush() }
        for index in 0..<16 {
            storage[count + index] = Self.hexDigit(UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * index)) & 0x0F)
        }
        count += 16
    }

    /// The lowercase hex digit of a nibble (0…15).
    package static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// A number in its canonical text.
    package mutating func number(_ number: JSONNumber) {
        if case .int(let value) = number.storage {
            integer(value)
        } else {
            number.withCanonicalText { bytes($0) }
        }
    }

    /// An integer that fits 64 bits, in decimal.
    package mutating func integer(_ value: Int64) {
        if storage.count - count < 20 { flush() }
        // Written right-aligned in the next 20 bytes, then moved forward to `count`.
        let start = JSONNumber.writeDecimal(value.magnitude, negative: value < 0, endingAt: count + 20, in: storage)
        for offset in start..<(count + 20) {
            storage[count] = storage[offset]
            count += 1
        }
    }

    /// Whether the UTF-8 bytes `lhs` sort before `rhs` (equal to code-point order).
    @inline(__always)
    static func precedes(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        let shared = min(lhs.count, rhs.count)
        var offset = 0
        while offset < shared {
            if lhs[offset] != rhs[offset] { return lhs[offset] < rhs[offset] }
            offset += 1
        }
        return lhs.count < rhs.count
    }
}
