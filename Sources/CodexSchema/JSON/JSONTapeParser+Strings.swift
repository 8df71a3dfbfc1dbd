/// Strings: the eight-bytes-at-a-time scan of a string without escapes (which stays in the source
/// text), and the decoding of escapes and validation of UTF-8 for the rest (whose bytes go to the arena).
extension JSONTapeParser {
    /// Parses the string whose opening quote is at `index` onto the tape; leaves `index` after its
    /// closing quote. Returns whether it had escapes (its bytes went to the arena).
    @discardableResult @inline(__always)
    mutating func parseString() throws(CodexSchemaError) -> Bool {
        let start = index + 1
        var cursor = start
        var ascii = true
        guard let base = bytes.baseAddress else { throw error(.jsonUnexpectedEnd, "input ends inside a string") }
        while true {
            // Eight bytes at a time while none is a quote, backslash, control or non-ASCII byte.
            while cursor + 8 <= count {
                let word = UnsafeRawPointer(base + cursor).loadUnaligned(as: UInt64.self)
                let mask = Self.attentionMask(word)
                if mask != 0 {
                    // The lowest flagged byte is exact (the tricks only misfire above a true hit).
                    cursor += mask.trailingZeroBitCount >> 3
                    break
                }
                cursor += 8
            }
            guard cursor < count else {
                throw CodexSchemaError(code: .jsonUnexpectedEnd, message: "input ends inside a string", byteOffset: count)
            }
            let byte = bytes[cursor]
            if byte == UInt8(ascii: "\"") {
                index = cursor + 1
                tape.entries.append(JSONTape.Entry(
                    kind: .string, flags: ascii ? JSONTape.Flags.ascii : 0, count: UInt32(cursor - start), payload: Int64(start)
                ))
                return false
            }
            if byte == UInt8(ascii: "\\") {
                try parseEscapedString(start: start, firstEscape: cursor, ascii: ascii)
                return true
            }
            if byte < 0x20 {
                throw CodexSchemaError(code: .jsonControlCharacter, message: "unescaped control character in a string", byteOffset: cursor)
            }
            if byte >= 0x80 {
                ascii = false
                cursor += try validateUTF8Sequence(at: cursor)
            } else {
                cursor += 1
            }
        }
    }

    @inline(__always)
    /// High bits set in the bytes of `word` (little-endian) that are a quote, a backslash, a control
    /// character or non-ASCII. Bytes above the first flagged one may be flagged spuriously.
    private static func attentionMask(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let hasQuote = (quote &- ones) & ~quote
        let hasBackslash = (backslash &- ones) & ~backslash
        let hasControl = (word &- ones &* 0x20) & ~word
        return ((hasQuote | hasBackslash | hasControl) | word) & highs
    }

    /// The slow path once a backslash appears: decode into the tape's arena.
    private mutating func parseEscapedString(start: Int, firstEscape: Int, ascii: Bool) throws(CodexSchemaError) {
        let arenaStart = tape.arena.count
        tape.arena.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<firstEscape]))
        var cursor = firstEscape
        while cursor < count {
            let byte = bytes[cursor]
            switch byte {
            case UInt8(ascii: "\""):
                index = cursor + 1
                var flags = JSONTape.Flags.inArena
                if !tape.arena[arenaStart...].contains(where: { $0 >= 0x80 }) { flags |= JSONTape.Flags.ascii }
                tape.entries.append(JSONTape.Entry(
                    kind: .string, flags: flags, count: UInt32(tape.arena.count - arenaStart), payload: Int64(arenaStart)
                ))
                return
            case UInt8(ascii: "\\"):
                cursor = try decodeEscape(at: cursor)
            case 0..<0x20:
                throw CodexSchemaError(code: .jsonControlCharacter, message: "unescaped control character in a string", byteOffset: cursor)
            case 0x80...:
                let length = try validateUTF8Sequence(at: cursor)
                tape.arena.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[cursor..<(cursor + length)]))
                cursor += length
            default:
                tape.arena.append(byte)
                cursor += 1
            }
        }
        throw CodexSchemaError(code: .jsonUnexpectedEnd, message: "input ends inside a string", byteOffset: count)
    }

    /// Decodes the escape whose backslash is at `position` into the arena; returns the next position.
    private mutating func decodeEscape(at position: Int) throws(CodexSchemaError) -> Int {
        guard position + 1 < count else {
            throw CodexSchemaError(code: .jsonUnexpectedEnd, message: "input ends inside an escape", byteOffset: count)
        }
        let simple: UInt8
        switch bytes[position + 1] {
        case UInt8(ascii: "\""): simple = 0x22
        case UInt8(ascii: "\\"): simple = 0x5C
        case UInt8(ascii: "/"): simple = 0x2F
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"):
            let unit = try hexUnit(at: position)
            var scalarValue = UInt32(unit)
            var next = position + 6
            if (0xD800...0xDBFF).contains(unit) {
                guard next + 1 < count, bytes[next] == UInt8(ascii: "\\"), bytes[next + 1] == UInt8(ascii: "u") else {
                    throw CodexSchemaError(code: .jsonLoneSurrogate, message: "high surrogate escape without a low surrogate", byteOffset: position)
                }
                let low = try hexUnit(at: next)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw CodexSchemaError(code: .jsonLoneSurrogate, message: "high surrogate escape without a low surrogate", byteOffset: position)
                }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                next += 6
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw CodexSchemaError(code: .jsonLoneSurrogate, message: "low surrogate escape without a high surrogate", byteOffset: position)
            }
            guard let scalar = Unicode.Scalar(scalarValue) else {
                throw CodexSchemaError(code: .jsonInvalidEscape, message: "escape is not a Unicode scalar", byteOffset: position)
            }
            tape.arena.append(contentsOf: UTF8.encode(scalar) ?? UTF8.EncodedScalar())
            return next
        default:
            throw CodexSchemaError(code: .jsonInvalidEscape, message: "invalid escape sequence", byteOffset: position)
        }
        tape.arena.append(simple)
        return position + 2
    }

    /// The UTF-16 unit of the `\uXXXX` escape whose backslash is at `position`.
    private func hexUnit(at position: Int) throws(CodexSchemaError) -> UInt16 {
        guard position + 6 <= count else {
            throw CodexSchemaError(code: .jsonUnexpectedEnd, message: "input ends inside a \\u escape", byteOffset: count)
        }
        var unit: UInt16 = 0
        for offset in 2..<6 {
            let byte = bytes[position + offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default:
                throw CodexSchemaError(code: .jsonInvalidEscape, message: "\\u escape needs four hex digits", byteOffset: position + offset)
            }
            unit = unit << 4 | UInt16(digit)
        }
        return unit
    }

    /// Validates the multi-byte UTF-8 sequence starting at `position` (RFC 3629: no overlong forms,
    /// no surrogates, nothing above U+10FFFF) and returns its length.
    private func validateUTF8Sequence(at position: Int) throws(CodexSchemaError) -> Int {
        let lead = bytes[position]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default:
            throw CodexSchemaError(code: .jsonInvalidUTF8, message: "invalid UTF-8 lead byte", byteOffset: position)
        }
        for offset in 1..<length {
            guard position + offset < count else {
                throw CodexSchemaError(code: .jsonInvalidUTF8, message: "truncated UTF-8 sequence", byteOffset: position)
            }
            let byte = bytes[position + offset]
            let (low, high) = offset == 1 ? (lower, upper) : (UInt8(0x80), UInt8(0xBF))
            guard byte >= low, byte <= high else {
                throw CodexSchemaError(code: .jsonInvalidUTF8, message: "invalid UTF-8 continuation byte", byteOffset: position)
            }
        }
        return length
    }
}
