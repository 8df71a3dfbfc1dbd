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
        CanonicalJSONWriter.bytes(of: self, sortsKeys: true)
    }

    /// The canonical JSON encoding as a string. See ``canonicalBytes()``.
    public func canonicalString() -> String {
        String(decoding: canonicalBytes(), as: UTF8.self)
    }

    /// Compact JSON with object members in their stored order (not sorted); otherwise as
    /// ``canonicalBytes()``: no whitespace, canonical numbers, minimal escapes.
    public func compactBytes() -> [UInt8] {
        CanonicalJSONWriter.bytes(of: self, sortsKeys: false)
    }

    /// ``compactBytes()`` as a string.
    public func compactString() -> String {
        String(decoding: compactBytes(), as: UTF8.self)
    }
}

/// Writes the canonical (or compact) form of a ``JSONValue`` through a ``CanonicalJSONSink``.
enum CanonicalJSONWriter {
    /// The encoding of `value` in one array.
    static func bytes(of value: JSONValue, sortsKeys: Bool) -> [UInt8] {
        var output: [UInt8] = []
        CanonicalJSONSink.write(to: { output.append(contentsOf: $0) }) { write(value, sortsKeys: sortsKeys, into: &$0) }
        return output
    }

    private static func write(_ value: JSONValue, sortsKeys: Bool, into sink: inout CanonicalJSONSink) {
        switch value {
        case .null:
            sink.ascii("null")
        case .bool(let flag):
            if flag { sink.ascii("true") } else { sink.ascii("false") }
        case .number(let number):
            sink.number(number)
        case .string(let text):
            writeString(text, into: &sink)
        case .array(let elements):
            sink.byte(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { sink.byte(UInt8(ascii: ",")) }
                write(element, sortsKeys: sortsKeys, into: &sink)
            }
            sink.byte(UInt8(ascii: "]"))
        case .object(let object):
            sink.byte(UInt8(ascii: "{"))
            var members = object.members
            if sortsKeys, !isSorted(members) { members.sort { utf8Precedes($0.key, $1.key) } }
            for (offset, member) in members.enumerated() {
                if offset > 0 { sink.byte(UInt8(ascii: ",")) }
                writeString(member.key, into: &sink)
                sink.byte(UInt8(ascii: ":"))
                write(member.value, sortsKeys: sortsKeys, into: &sink)
            }
            sink.byte(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ text: String, into sink: inout CanonicalJSONSink) {
        var text = text
        text.withUTF8 { sink.string($0) }
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
}
