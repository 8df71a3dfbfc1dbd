/// A JSON value with exact numbers.
///
/// `JSONValue` is what the parser produces, what schemas are written in, and what the canonical
/// serializer writes. Equality is JSON equality: numbers compare mathematically (`1 == 1.0`), booleans
/// never equal numbers, and objects compare without regard to key order.
///
/// ```swift
/// let value = try JSONValue(parsing: #"{"name": "Ada", "tags": ["x"], "score": 1.0}"#)
/// value["score"] == 1                 // true
/// value.canonicalString()             // {"name":"Ada","score":1,"tags":["x"]}
/// let literal: JSONValue = ["type": "object", "properties": [:]]
/// ```
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, exact.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object. Keys are unique; their order is kept but carries no meaning for equality.
    case object(JSONObject)

    /// The member named `key` when this is an object, else `nil`.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The element at `index` when this is an array and the index is in range, else `nil`.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }

    /// The string payload, or `nil`.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number payload, or `nil`.
    public var numberValue: JSONNumber? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The Boolean payload, or `nil`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The array payload, or `nil`.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The object payload, or `nil`.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool { self == .null }

    /// The JSON type name used by JSON Schema: `null`, `boolean`, `object`, `array`, `number` or `string`.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number(let number): return number.isInteger ? "integer" : "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

extension JSONValue {
    /// JSON equality: numbers mathematically (`1 == 1.0`), strings by code points (so `"ä"` and
    /// `"a\u{308}"` differ, unlike Swift's `String ==`), objects regardless of member order; a Boolean
    /// never equals a number.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let left), .bool(let right)): return left == right
        case (.number(let left), .number(let right)): return left == right
        case (.string(let left), .string(let right)): return JSONText.equal(left, right)
        case (.array(let left), .array(let right)): return left == right
        case (.object(let left), .object(let right)): return left == right
        default: return false
        }
    }

    /// Hashes consistently with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case .bool(let flag): hasher.combine(1 as UInt8); hasher.combine(flag)
        case .number(let number): hasher.combine(2 as UInt8); hasher.combine(number)
        case .string(let text): hasher.combine(3 as UInt8); JSONText.hash(text, into: &hasher)
        case .array(let elements): hasher.combine(4 as UInt8); hasher.combine(elements)
        case .object(let object): hasher.combine(5 as UInt8); hasher.combine(object)
        }
    }
}

/// String comparison by code points (UTF-8 bytes), which is JSON's notion of string equality.
enum JSONText {
    static func equal(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && lhs.utf8.elementsEqual(rhs.utf8)
    }

    static func hash(_ text: String, into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

extension JSONValue: ExpressibleByNilLiteral {
    /// `nil` is `null`.
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// A Boolean literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// An integer literal.
    public init(integerLiteral value: Int64) { self = .number(JSONNumber(value)) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// A floating-point literal, as its shortest round-tripping decimal.
    public init(floatLiteral value: Double) { self = .number(JSONNumber(floatLiteral: value)) }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// A string literal.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// An array literal.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// An object literal, in the order written. A repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements))
    }
}

extension JSONValue: CustomStringConvertible {
    /// The canonical JSON text.
    public var description: String { canonicalString() }
}
