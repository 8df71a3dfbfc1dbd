import Foundation

/// Decodes any `Decodable` value from an already parsed ``JSONValue`` or ``JSONDocument``, without going
/// back to text.
///
/// ```swift
/// struct Draft: Decodable { let subject: String; let count: Int64 }
/// let value = try JSONValue(parsing: #"{"subject":"Late","count":9007199254740993}"#)
/// let draft = try JSONValueDecoder().decode(Draft.self, from: value)   // count keeps every digit
/// ```
///
/// It follows Foundation `JSONDecoder`'s default strategies, so a type decodes the same way through
/// either: custom `init(from:)` implementations run as written; integers must be mathematical integers
/// within the type's range (`1.0` and `1e2` are accepted, `1.5` is not) and are converted exactly, never
/// through `Double`; `Double` and `Float` take the nearest value (a value beyond the type's range, or
/// a non-zero value that rounds to zero, is an error); `Date` uses its own `Decodable` form (seconds since 2001), `Data` is base64, `URL` a string
/// and `Decimal` a number. Failures are `DecodingError`s with the coding path.
public struct JSONValueDecoder: Sendable {
    /// Creates a decoder.
    public init() {}

    /// Decodes `type` from `value`.
    /// - Throws: `DecodingError`, or what the type's initializer throws.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try ValueDecoder(value: value, codingPath: []).decodeValue(type)
    }

    /// Decodes `type` from a parsed document, reading its compact form in place: no ``JSONValue`` tree
    /// is built. The rules, results and errors are those of ``decode(_:from:)-(_,JSONValue)``.
    ///
    /// ```swift
    /// let document = try JSONDocument(parsing: Array(modelOutput.utf8))
    /// let draft = try JSONValueDecoder().decode(Draft.self, from: document)
    /// ```
    /// - Throws: `DecodingError`, or what the type's initializer throws.
    public func decode<T: Decodable>(_ type: T.Type, from document: JSONDocument) throws -> T {
        try JSONTapeValueDecoder(index: 0, path: .root(JSONTapeDecodingSource(document))).decodeValue(type)
    }
}

/// The `Decoder` over one value.
private struct ValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else { throw mismatch([String: JSONValue].self, value, codingPath) }
        return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let array) = value else { throw mismatch([JSONValue].self, value, codingPath) }
        return UnkeyedContainer(array: array, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValue(value: value, codingPath: codingPath) }

    /// Decodes a value, with `JSONDecoder`'s special cases for Foundation types.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == Data.self {
            let text = try SingleValue(value: value, codingPath: codingPath).decode(String.self)
            return try cast(JSONDecodingRules.data(text) { codingPath })
        }
        if T.self == URL.self {
            let text = try SingleValue(value: value, codingPath: codingPath).decode(String.self)
            return try cast(JSONDecodingRules.url(text) { codingPath })
        }
        if T.self == Decimal.self {
            guard case .number(let number) = value, let decimal = Decimal(string: number.canonicalText) else {
                throw mismatch(Decimal.self, value, codingPath)
            }
            return try cast(decimal)
        }
        return try T(from: self)
    }

    private func cast<T, Special>(_ special: Special) throws -> T {
        guard let result = special as? T else { throw mismatch(T.self, value, codingPath) }
        return result
    }
}

/// A `typeMismatch` naming the JSON value's kind (never its content).
private func mismatch(_ type: Any.Type, _ value: JSONValue, _ codingPath: [any CodingKey]) -> DecodingError {
    JSONDecodingRules.mismatch(type, value.tapeKind, codingPath)
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: JSONObject
    let codingPath: [any CodingKey]

    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func member(_ key: Key) throws -> JSONValue {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key.stringValue)."))
        }
        return value
    }

    private func single(_ key: Key) throws -> SingleValue {
        SingleValue(value: try member(key), codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try member(key) { return true }
        return false
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try single(key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try single(key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try single(key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try single(key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try single(key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try single(key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try single(key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try single(key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try single(key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try single(key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try single(key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try single(key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try single(key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try single(key).decode(type) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try ValueDecoder(value: try member(key), codingPath: codingPath + [key]).decodeValue(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoder(value: try member(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: try member(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        ValueDecoder(value: object["super"] ?? .null, codingPath: codingPath + [JSONIndexKey.superKey])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: object[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let array: [JSONValue]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(array: [JSONValue], codingPath: [any CodingKey]) {
        self.array = array
        self.codingPath = codingPath
    }

    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    private var indexPath: [any CodingKey] { codingPath + [JSONIndexKey(index: currentIndex)] }

    private func current(_ type: Any.Type) throws -> JSONValue {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: indexPath, debugDescription: "Unkeyed container is at end."))
        }
        return array[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        if case .null = try current(Never.self) {
            currentIndex += 1
            return true
        }
        return false
    }

    private mutating func next<T>(_ type: T.Type, _ body: (SingleValue) throws -> T) throws -> T {
        let result = try body(SingleValue(value: try current(type), codingPath: indexPath))
        currentIndex += 1
        return result
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: String.Type) throws -> String { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try $0.decode(type) } }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let result = try ValueDecoder(value: try current(type), codingPath: indexPath).decodeValue(type)
        currentIndex += 1
        return result
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let container = try ValueDecoder(value: try current(type), codingPath: indexPath).container(keyedBy: type)
        currentIndex += 1
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let container = try ValueDecoder(value: try current([JSONValue].self), codingPath: indexPath).unkeyedContainer()
        currentIndex += 1
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let decoder = ValueDecoder(value: try current(JSONValue.self), codingPath: indexPath)
        currentIndex += 1
        return decoder
    }
}

private struct SingleValue: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool {
        if case .null = value { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let bool) = value else { throw mismatch(type, value, codingPath) }
        return bool
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let string) = value else { throw mismatch(type, value, codingPath) }
        return string
    }

    private func number(_ type: Any.Type) throws -> JSONNumber {
        guard case .number(let number) = value else { throw mismatch(type, value, codingPath) }
        return number
    }

    func decode(_ type: Double.Type) throws -> Double { try JSONDecodingRules.double(try number(type)) { codingPath } }

    func decode(_ type: Float.Type) throws -> Float { try JSONDecodingRules.float(try number(type)) { codingPath } }

    /// An integer converted exactly: the number must be a mathematical integer within `T`'s range.
    private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        try JSONDecodingRules.integer(try number(type), as: type) { codingPath }
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try ValueDecoder(value: value, codingPath: codingPath).decodeValue(type)
    }
}
