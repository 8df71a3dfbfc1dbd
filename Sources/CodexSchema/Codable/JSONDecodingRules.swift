import Foundation

/// The conversions and errors both decoders share (from a ``JSONValue`` and from a parse tape), so the
/// two paths follow one set of rules: `JSONDecoder`'s default strategies with exact integers.
enum JSONDecodingRules {
    /// A `typeMismatch` (or `valueNotFound` for `null`) naming the JSON value's kind, never its content.
    static func mismatch(_ type: Any.Type, _ kind: JSONTape.Kind, _ codingPath: [any CodingKey]) -> DecodingError {
        let found: String
        switch kind {
        case .null:
            return .valueNotFound(type, .init(codingPath: codingPath, debugDescription: "Expected \(type) but found null instead."))
        case .false, .true: found = "a boolean"
        case .integer, .number: found = "a number"
        case .string: found = "a string"
        case .array: found = "an array"
        case .object: found = "an object"
        }
        return .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "Expected to decode \(type) but found \(found) instead."))
    }

    /// The nearest `Double`; like `JSONDecoder`, a value out of range, or a non-zero value that rounds to
    /// zero, is refused.
    static func double(_ number: JSONNumber, _ codingPath: () -> [any CodingKey]) throws -> Double {
        let double = number.doubleValue
        guard double.isFinite, double != 0 || number.isZero else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "Parsed JSON number does not fit in Double."))
        }
        return double
    }

    /// The nearest `Float`, refused like ``double(_:_:)``.
    static func float(_ number: JSONNumber, _ codingPath: () -> [any CodingKey]) throws -> Float {
        let float = Float(number.doubleValue)
        guard float.isFinite, float != 0 || number.isZero else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "Parsed JSON number does not fit in Float."))
        }
        return float
    }

    /// An integer converted exactly: the number must be a mathematical integer within `T`'s range.
    @inline(__always)
    static func integer<T: FixedWidthInteger>(_ number: JSONNumber, as type: T.Type, _ codingPath: () -> [any CodingKey]) throws -> T {
        if let small = number.int64Value, let exact = T(exactly: small) { return exact }
        if number.isInteger, let exact = T(number.canonicalText) { return exact }
        throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "Parsed JSON number does not fit in \(type)."))
    }

    /// `Data` from base64 text, as `JSONDecoder` reads it by default.
    static func data(_ text: String, _ codingPath: () -> [any CodingKey]) throws -> Data {
        guard let data = Data(base64Encoded: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "Encountered Data is not valid Base64."))
        }
        return data
    }

    /// A `URL` from its string.
    static func url(_ text: String, _ codingPath: () -> [any CodingKey]) throws -> URL {
        guard let url = URL(string: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "Invalid URL string."))
        }
        return url
    }
}

/// The kind of a value, in the tape's terms.
extension JSONValue {
    var tapeKind: JSONTape.Kind {
        switch self {
        case .null: .null
        case .bool(let flag): flag ? .true : .false
        case .number: .number
        case .string: .string
        case .array: .array
        case .object: .object
        }
    }
}

/// An index coding key for array elements and super decoders.
struct JSONIndexKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }
    init?(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }
    init?(intValue: Int) { self.init(index: intValue) }
    static let superKey = JSONIndexKey(stringValue: "super") ?? JSONIndexKey(index: 0)
}
