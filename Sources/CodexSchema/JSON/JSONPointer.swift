/// JSON Pointer (RFC 6901) helpers: escaping, rendering and parsing reference tokens.
///
/// Pointers are written without a leading `#`: `""` is the whole document, `"/a/0"` is the first
/// element of member `a`. In tokens `~` is written `~0` and `/` is written `~1`.
public enum JSONPointer {
    /// Escapes one reference token (`~` → `~0`, `/` → `~1`).
    public static func escape(_ token: String) -> String {
        guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return token }
        return token.replacingTildeAndSlash()
    }

    /// Renders tokens as a pointer, e.g. `["a", "b/c"]` → `"/a/b~1c"`.
    public static func render(_ tokens: some Sequence<String>) -> String {
        var text = ""
        for token in tokens {
            text += "/"
            text += escape(token)
        }
        return text
    }

    /// Splits a pointer into unescaped tokens, or returns `nil` when it is not a valid pointer
    /// (non-empty without a leading `/`, or a `~` not followed by `0` or `1`).
    public static func tokens(_ pointer: String) -> [String]? {
        if pointer.isEmpty { return [] }
        guard pointer.utf8.first == UInt8(ascii: "/") else { return nil }
        var result: [String] = []
        for raw in pointer.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst() {
            var token: [UInt8] = []
            var iterator = raw.makeIterator()
            while let byte = iterator.next() {
                if byte == UInt8(ascii: "~") {
                    switch iterator.next() {
                    case UInt8(ascii: "0"): token.append(UInt8(ascii: "~"))
                    case UInt8(ascii: "1"): token.append(UInt8(ascii: "/"))
                    default: return nil
                    }
                } else {
                    token.append(byte)
                }
            }
            result.append(String(decoding: token, as: UTF8.self))
        }
        return result
    }

    /// Percent-decodes a URI fragment (`%25` → `%`), or returns `nil` for a malformed escape or a
    /// decoded result that is not UTF-8.
    public static func percentDecode(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

extension String {
    fileprivate func replacingTildeAndSlash() -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count + 2)
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "~"): bytes.append(contentsOf: "~0".utf8)
            case UInt8(ascii: "/"): bytes.append(contentsOf: "~1".utf8)
            default: bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
