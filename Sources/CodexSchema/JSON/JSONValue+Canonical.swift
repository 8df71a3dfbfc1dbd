extension JSONValue {
    /// The canonical JSON encoding: object keys sorted by their UTF-8 bytes, no insignificant whitespace,
    /// numbers in their exact ``JSONNumber/canonicalText``, and minimal string escapes (only `"`, `\`
    /// and control characters; `/` and non-ASCII characters are written as they are).
    ///
    /// Equal values produce equal bytes, so the output is suitable for digests and byte comparison, and
    /// parsing the output gives back an equal value.
    ///
    /// - Returns: The UTF-8 bytes.
    public func canonicalBytes() -> [UInt8] {
        var writer = CanonicalJSONWriter()
        writer.write(self)
        return writer.output
    }

    /// The canonical JSON encoding as a string. See ``canonicalBytes()``.
    public func canonicalString() -> String {
        String(decoding: canonicalBytes(), as: UTF8.self)
    }

    /// Compact JSON with object members in their stored order (not sorted); otherwise as
    /// ``canonicalBytes()``: no whitespace, canonical numbers, minimal escapes.
    public func compactBytes() -> [UInt8] {
        var writer = CanonicalJSONWriter(sortsKeys: false)
        writer.write(self)
        return writer.output
    }

    /// ``compactBytes()`` as a string.
    public func compactString() -> String {
        String(decoding: compactBytes(), as: UTF8.self)
    }
}

/// Writes the canonical form of a ``JSONValue`` into a byte buffer.
struct CanonicalJSONWriter {
    private(set) var output: [UInt8] = []
    /// Whether object members are written in UTF-8 byte order of their keys (canonical form).
    var sortsKeys = true

    mutating func write(_ value: JSONValue) {
        switch value {
        case .null:
            output.append(contentsOf: "null".utf8)
        case .bool(let flag):
            output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number):
            writeNumber(number)
        case .string(let text):
            writeString(text)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                write(element)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            var members = object.members
            if sortsKeys, !Self.isSorted(members) { members.sort { Self.utf8Precedes($0.key, $1.key) } }
            for (offset, member) in members.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                writeString(member.key)
                output.append(UInt8(ascii: ":"))
                write(member.value)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func isSorted(_ members: [JSONObject.Member]) -> Bool {
        var previous: String?
        for member in members {
            if let previous, !utf8Precedes(previous, member.key) { return false }
            previous = member.key
        }
        return true
    }

    /// Byte order of the UTF-8 encodings (equal to code-point order).
    static func utf8Precedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    private mutating func writeNumber(_ number: JSONNumber) {
        if case .int(let value) = number.storage {
            output.append(contentsOf: String(value).utf8) // at most 20 bytes: a small string, no allocation
        } else {
            output.append(contentsOf: number.canonicalText.utf8)
        }
    }

    private mutating func writeString(_ text: String) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var runStart = 0
            for (offset, byte) in bytes.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<offset]))
                appendEscape(byte)
                runStart = offset + 1
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        output.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscape(_ byte: UInt8) {
        output.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: output.append(0x22)
        case 0x5C: output.append(0x5C)
        case 0x08: output.append(UInt8(ascii: "b"))
        case 0x0C: output.append(UInt8(ascii: "f"))
        case 0x0A: output.append(UInt8(ascii: "n"))
        case 0x0D: output.append(UInt8(ascii: "r"))
        case 0x09: output.append(UInt8(ascii: "t"))
        default:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            output.append(contentsOf: "u00".utf8)
            output.append(hex[Int(byte >> 4)])
            output.append(hex[Int(byte & 0x0F)])
        }
    }
}
