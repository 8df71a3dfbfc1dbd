import CodexSchema
import Foundation

/// Reads TOML (v1.0) into JSON values: tables become objects, arrays of tables arrays of objects,
/// integers and floats numbers, booleans booleans; strings of every kind become strings, and dates and
/// times are kept as their text. For configuration files (`[mcp_servers.<name>]` tables): a file of at
/// most 1 MiB, every error named with its line.
struct TOMLReader {
    /// Why a document was refused.
    struct Failure: Error, CustomStringConvertible {
        /// The 1-based line.
        let line: Int
        /// What is wrong.
        let reason: String
        /// `line N: reason`.
        var description: String { "line \(line): \(reason)" }
    }

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var root = JSONObject()
    /// The path of the table the key/value lines go to.
    private var current: [String] = []
    /// Tables opened by a header or a dotted key (a second header for them is an error).
    private var defined: Set<[String]> = []

    /// Parses `bytes`.
    static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONObject {
        var reader = TOMLReader(bytes: bytes)
        try reader.document()
        return reader.root
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    // MARK: - Document

    private mutating func document() throws(Failure) {
        while true {
            skipWhitespaceAndComments(newlines: true)
            guard let byte = peek() else { return }
            if byte == UInt8(ascii: "[") {
                try header()
            } else {
                try keyValue(into: current)
            }
            try endOfLine()
        }
    }

    private mutating func header() throws(Failure) {
        advance()
        let isArray = peek() == UInt8(ascii: "[")
        if isArray { advance() }
        skipSpaces()
        let path = try key()
        skipSpaces()
        try expect("]")
        if isArray { try expect("]") }
        if isArray {
            try appendArrayTable(path)
        } else {
            guard !defined.contains(path) else { throw fail("table [\(path.joined(separator: "."))] is defined twice") }
            defined.insert(path)
            try ensureTable(path)
        }
        current = path
    }

    private mutating func keyValue(into table: [String]) throws(Failure) {
        let path = try key()
        skipSpaces()
        try expect("=")
        skipSpaces()
        let value = try self.value()
        let full = table + path
        if path.count > 1 {
            try ensureTable(Array(full.dropLast()))
            defined.insert(Array(full.dropLast()))
        }
        try set(value, at: full)
    }

    private mutating func endOfLine() throws(Failure) {
        skipSpaces()
        if peek() == UInt8(ascii: "#") { skipComment() }
        guard let byte = peek() else { return }
        if byte == UInt8(ascii: "\r"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\n") { advance() }
        guard peek() == UInt8(ascii: "\n") else { throw fail("unexpected text after a value") }
        advance()
        line += 1
    }

    // MARK: - Keys

    private mutating func key() throws(Failure) -> [String] {
        var parts: [String] = [try simpleKey()]
        while true {
            skipSpaces()
            guard peek() == UInt8(ascii: ".") else { return parts }
            advance()
            skipSpaces()
            parts.append(try simpleKey())
        }
    }

    private mutating func simpleKey() throws(Failure) -> String {
        guard let byte = peek() else { throw fail("a key is missing") }
        if byte == UInt8(ascii: "\"") { return try basicString() }
        if byte == UInt8(ascii: "'") { return try literalString() }
        let start = index
        while let byte = peek(), Self.isBareKeyByte(byte) { advance() }
        guard index > start else { throw fail("a key is missing") }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private static func isBareKeyByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    // MARK: - Values

    private mutating func value(depth: Int = 0) throws(Failure) -> JSONValue {
        guard depth < 64 else { throw fail("values nest deeper than 64") }
        guard let byte = peek() else { throw fail("a value is missing") }
        switch byte {
        case UInt8(ascii: "\""):
            if starts(with: "\"\"\"") { return .string(try multilineBasicString()) }
            return .string(try basicString())
        case UInt8(ascii: "'"):
            if starts(with: "'''") { return .string(try multilineLiteralString()) }
            return .string(try literalString())
        case UInt8(ascii: "["):
            return try array(depth: depth)
        case UInt8(ascii: "{"):
            return try inlineTable(depth: depth)
        default:
            return try scalar()
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        advance()
        var elements: [JSONValue] = []
        while true {
            skipWhitespaceAndComments(newlines: true)
            if peek() == UInt8(ascii: "]") {
                advance()
                return .array(elements)
            }
            elements.append(try value(depth: depth + 1))
            skipWhitespaceAndComments(newlines: true)
            if peek() == UInt8(ascii: ",") {
                advance()
                continue
            }
            skipWhitespaceAndComments(newlines: true)
            try expect("]")
            return .array(elements)
        }
    }

    private mutating func inlineTable(depth: Int) throws(Failure) -> JSONValue {
        advance()
        var table = JSONObject()
        skipSpaces()
        if peek() == UInt8(ascii: "}") {
            advance()
            return .object(table)
        }
        while true {
            skipSpaces()
            let path = try key()
            skipSpaces()
            try expect("=")
            skipSpaces()
            let element = try value(depth: depth + 1)
            var object = JSONValue.object(table)
            try insert(element, at: path[...], into: &object)
            if case .object(let updated) = object { table = updated }
            skipSpaces()
            if peek() == UInt8(ascii: ",") {
                advance()
                continue
            }
            try expect("}")
            return .object(table)
        }
    }

    private mutating func scalar() throws(Failure) -> JSONValue {
        let start = index
        while let byte = peek(), !(byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "#")
            || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r"))
        {
            advance()
        }
        var text = String(decoding: bytes[start..<index], as: UTF8.self)
        while text.last == " " || text.last == "\t" { text.removeLast() }
        switch text {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "inf", "+inf", "-inf", "nan", "+nan", "-nan": return .string(text)
        default: break
        }
        let digits = text.replacingOccurrences(of: "_", with: "")
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where digits.hasPrefix(prefix) {
            guard let value = Int64(digits.dropFirst(2), radix: radix) else { throw fail("'\(Self.shown(text))' is not a number") }
            return .number(JSONNumber(value))
        }
        if let number = JSONNumber(parsing: digits.hasPrefix("+") ? String(digits.dropFirst()) : digits), !text.contains("__") {
            return .number(number)
        }
        // Dates and times (1979-05-27, 07:32:00, 1979-05-27T07:32:00Z) are kept as text.
        if let first = text.unicodeScalars.first, CharacterSet.decimalDigits.contains(first), text.contains("-") || text.contains(":") {
            return .string(text)
        }
        throw fail(text.isEmpty ? "a value is missing" : "'\(Self.shown(text))' is not a TOML value (strings need quotes)")
    }

    // MARK: - Strings

    private mutating func basicString() throws(Failure) -> String {
        advance()
        var scalars: [UInt8] = []
        while true {
            guard let byte = peek() else { throw fail("a string is not closed") }
            if byte == UInt8(ascii: "\"") {
                advance()
                return String(decoding: scalars, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\n") { throw fail("a string is not closed on its line") }
            if byte == UInt8(ascii: "\\") {
                scalars += try escape()
            } else {
                scalars.append(byte)
                advance()
            }
        }
    }

    private mutating func multilineBasicString() throws(Failure) -> String {
        index += 3
        if peek() == UInt8(ascii: "\n") { newline() } else if starts(with: "\r\n") { index += 1; newline() }
        var scalars: [UInt8] = []
        while true {
            guard let byte = peek() else { throw fail("a multi-line string is not closed") }
            if starts(with: "\"\"\"") {
                index += 3
                // Up to two quotes right before the closing delimiter belong to the string.
                while peek() == UInt8(ascii: "\"") {
                    scalars.append(UInt8(ascii: "\""))
                    advance()
                }
                return String(decoding: scalars, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") {
                let next = index + 1 < bytes.count ? bytes[index + 1] : 0
                if next == UInt8(ascii: "\n") || next == UInt8(ascii: " ") || next == UInt8(ascii: "\t") || next == UInt8(ascii: "\r") {
                    // A line-ending backslash trims the newline and the whitespace after it.
                    advance()
                    while let space = peek(), space == UInt8(ascii: " ") || space == UInt8(ascii: "\t") || space == UInt8(ascii: "\n") || space == UInt8(ascii: "\r") {
                        if space == UInt8(ascii: "\n") { newline() } else { advance() }
                    }
                    continue
                }
                scalars += try escape()
                continue
            }
            if byte == UInt8(ascii: "\n") { newline() } else { advance() }
            scalars.append(byte)
        }
    }

    private mutating func literalString() throws(Failure) -> String {
        advance()
        let start = index
        while let byte = peek(), byte != UInt8(ascii: "'") {
            if byte == UInt8(ascii: "\n") { throw fail("a string is not closed on its line") }
            advance()
        }
        guard peek() == UInt8(ascii: "'") else { throw fail("a string is not closed") }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        advance()
        return text
    }

    private mutating func multilineLiteralString() throws(Failure) -> String {
        index += 3
        if peek() == UInt8(ascii: "\n") { newline() } else if starts(with: "\r\n") { index += 1; newline() }
        var collected: [UInt8] = []
        while true {
            guard let byte = peek() else { throw fail("a multi-line string is not closed") }
            if starts(with: "'''") {
                index += 3
                while peek() == UInt8(ascii: "'") {
                    collected.append(UInt8(ascii: "'"))
                    advance()
                }
                return String(decoding: collected, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\n") { newline() } else { advance() }
            collected.append(byte)
        }
    }

    private mutating func escape() throws(Failure) -> [UInt8] {
        advance()
        guard let byte = peek() else { throw fail("a string ends in a backslash") }
        advance()
        switch byte {
        case UInt8(ascii: "b"): return [0x08]
        case UInt8(ascii: "t"): return [0x09]
        case UInt8(ascii: "n"): return [0x0A]
        case UInt8(ascii: "f"): return [0x0C]
        case UInt8(ascii: "r"): return [0x0D]
        case UInt8(ascii: "e"): return [0x1B]
        case UInt8(ascii: "\""): return [0x22]
        case UInt8(ascii: "\\"): return [0x5C]
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            let count = byte == UInt8(ascii: "u") ? 4 : 8
            guard index + count <= bytes.count, let code = UInt32(String(decoding: bytes[index..<(index + count)], as: UTF8.self), radix: 16),
                  let scalar = Unicode.Scalar(code)
            else { throw fail("a \\u escape is not a Unicode scalar") }
            index += count
            return Array(String(Character(scalar)).utf8)
        default:
            throw fail("unknown escape '\\\(Character(Unicode.Scalar(byte)))'")
        }
    }

    // MARK: - Tables

    private mutating func ensureTable(_ path: [String]) throws(Failure) {
        var object = JSONValue.object(root)
        try insert(nil, at: path[...], into: &object)
        if case .object(let updated) = object { root = updated }
    }

    private mutating func set(_ value: JSONValue, at path: [String]) throws(Failure) {
        var object = JSONValue.object(root)
        try insert(value, at: path[...], into: &object)
        if case .object(let updated) = object { root = updated }
    }

    /// Puts `value` at `path` (creating tables on the way; nil only creates them), walking into the last
    /// element of an array of tables.
    private func insert(_ value: JSONValue?, at path: ArraySlice<String>, into node: inout JSONValue) throws(Failure) {
        guard let first = path.first else { return }
        guard case .object(var object) = node else { throw fail("'\(Self.shown(first))' is inside a value that is not a table") }
        if path.count == 1, let value {
            guard object[first] == nil else { throw fail("key '\(Self.shown(first))' is defined twice") }
            object[first] = value
            node = .object(object)
            return
        }
        var child = object[first] ?? .object(JSONObject())
        if case .array(var elements) = child, let last = elements.indices.last {
            try insert(value, at: path.dropFirst(), into: &elements[last])
            child = .array(elements)
        } else {
            guard case .object = child else { throw fail("'\(Self.shown(first))' is already a value, not a table") }
            try insert(value, at: path.dropFirst(), into: &child)
        }
        object[first] = child
        node = .object(object)
    }

    private mutating func appendArrayTable(_ path: [String]) throws(Failure) {
        try ensureTable(Array(path.dropLast()))
        var object = JSONValue.object(root)
        try appendElement(at: path[...], into: &object)
        if case .object(let updated) = object { root = updated }
    }

    private func appendElement(at path: ArraySlice<String>, into node: inout JSONValue) throws(Failure) {
        guard let first = path.first, case .object(var object) = node else { throw fail("an array of tables is inside a value") }
        if path.count == 1 {
            switch object[first] {
            case nil: object[first] = .array([.object(JSONObject())])
            case .array(var elements)?:
                elements.append(.object(JSONObject()))
                object[first] = .array(elements)
            default: throw fail("'\(Self.shown(first))' is already a value, not an array of tables")
            }
        } else {
            var child = object[first] ?? .object(JSONObject())
            if case .array(var elements) = child, let last = elements.indices.last {
                try appendElement(at: path.dropFirst(), into: &elements[last])
                child = .array(elements)
            } else {
                try appendElement(at: path.dropFirst(), into: &child)
            }
            object[first] = child
        }
        node = .object(object)
    }

    // MARK: - Bytes

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func advance() { index += 1 }

    private mutating func newline() {
        index += 1
        line += 1
    }

    private func starts(with text: String) -> Bool {
        let pattern = Array(text.utf8)
        return index + pattern.count <= bytes.count && Array(bytes[index..<(index + pattern.count)]) == pattern
    }

    private mutating func expect(_ text: String) throws(Failure) {
        guard starts(with: text) else { throw fail("'\(text)' expected") }
        index += text.utf8.count
    }

    private mutating func skipSpaces() {
        while let byte = peek(), byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { advance() }
    }

    private mutating func skipComment() {
        while let byte = peek(), byte != UInt8(ascii: "\n") { advance() }
    }

    private mutating func skipWhitespaceAndComments(newlines: Bool) {
        while let byte = peek() {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") {
                advance()
            } else if byte == UInt8(ascii: "#") {
                skipComment()
            } else if newlines, byte == UInt8(ascii: "\n") {
                newline()
            } else {
                return
            }
        }
    }

    private func fail(_ reason: String) -> Failure { Failure(line: line, reason: reason) }

    private static func shown(_ text: String) -> String { String(text.prefix(40)) }
}
