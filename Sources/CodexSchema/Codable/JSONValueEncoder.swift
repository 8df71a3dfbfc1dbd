/// Encodes any `Encodable` value into a ``JSONValue``, keeping object members in the order the value
/// encodes them (Foundation's `JSONEncoder` on Linux does not keep an order).
///
/// ```swift
/// struct Profile: Encodable { let goal: String; let allergies: [String] }
/// let value = try JSONValueEncoder().encode(Profile(goal: "energy", allergies: ["peanuts"]))
/// value.compactString() // {"goal":"energy","allergies":["peanuts"]}
/// ```
///
/// Numbers become exact ``JSONNumber``s (floating-point values as their shortest round-tripping
/// decimal); non-finite floating-point values are an `EncodingError`. Types are encoded through their
/// own `encode(to:)`, with no special cases for `Date` or `Data`.
public struct JSONValueEncoder: Sendable {
    /// Creates an encoder.
    public init() {}

    /// Encodes `value`.
    ///
    /// - Throws: `EncodingError.invalidValue` for non-finite numbers, or what `value` throws.
    public func encode(_ value: some Encodable) throws -> JSONValue {
        let root = EncodingSlot()
        try value.encode(to: SlotEncoder(slot: root, codingPath: []))
        return root.materialize()
    }
}

/// A place an encoded value goes; containers fill child slots that are read back at the end.
final class EncodingSlot {
    enum Content {
        case empty
        case value(JSONValue)
        case object([(String, EncodingSlot)])
        case array([EncodingSlot])
    }

    var content: Content = .empty

    func makeObject() {
        if case .object = content { return }
        content = .object([])
    }

    func makeArray() {
        if case .array = content { return }
        content = .array([])
    }

    /// A new child slot for `key`, replacing an earlier one with the same key.
    func child(forKey key: String) -> EncodingSlot {
        let slot = EncodingSlot()
        if case .object(var members) = content {
            if let index = members.firstIndex(where: { $0.0 == key }) {
                members[index].1 = slot
            } else {
                members.append((key, slot))
            }
            content = .object(members)
        }
        return slot
    }

    /// A new child slot appended to the array.
    func appendChild() -> EncodingSlot {
        let slot = EncodingSlot()
        if case .array(var elements) = content {
            elements.append(slot)
            content = .array(elements)
        }
        return slot
    }

    var count: Int {
        switch content {
        case .array(let elements): return elements.count
        case .object(let members): return members.count
        default: return 0
        }
    }

    func materialize() -> JSONValue {
        switch content {
        case .empty: return .object(JSONObject())
        case .value(let value): return value
        case .array(let elements): return .array(elements.map { $0.materialize() })
        case .object(let members): return .object(JSONObject(uncheckedMembers: members.map { .init(key: $0.0, value: $0.1.materialize()) }))
        }
    }
}

/// Converts primitives to JSON values.
enum PrimitiveEncoding {
    static func number(_ value: some BinaryInteger) -> JSONValue {
        if let signed = Int64(exactly: value) { return .number(JSONNumber(signed)) }
        return .number(JSONNumber(UInt64(truncatingIfNeeded: value)))
    }

    static func number(_ value: Double, _ codingPath: [any CodingKey]) throws -> JSONValue {
        guard let number = JSONNumber(value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "JSON has no infinity or NaN"))
        }
        return .number(number)
    }

    static func number(_ value: Float, _ codingPath: [any CodingKey]) throws -> JSONValue {
        guard value.isFinite, let number = JSONNumber(parsing: value.description) ?? JSONNumber(Double(value)) else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "JSON has no infinity or NaN"))
        }
        return .number(number)
    }
}

struct SlotEncoder: Encoder {
    let slot: EncodingSlot
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        slot.makeObject()
        return KeyedEncodingContainer(KeyedSlotContainer<Key>(slot: slot, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        slot.makeArray()
        return UnkeyedSlotContainer(slot: slot, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleSlotContainer(slot: slot, codingPath: codingPath)
    }
}

struct KeyedSlotContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let slot: EncodingSlot
    let codingPath: [any CodingKey]

    private func set(_ value: JSONValue, _ key: Key) { slot.child(forKey: key.stringValue).content = .value(value) }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(try PrimitiveEncoding.number(value, codingPath + [key]), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(try PrimitiveEncoding.number(value, codingPath + [key]), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(PrimitiveEncoding.number(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(PrimitiveEncoding.number(value), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(PrimitiveEncoding.number(value), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(PrimitiveEncoding.number(value), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(PrimitiveEncoding.number(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(PrimitiveEncoding.number(value), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(PrimitiveEncoding.number(value), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(PrimitiveEncoding.number(value), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(PrimitiveEncoding.number(value), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(PrimitiveEncoding.number(value), key) }

    mutating func encode(_ value: some Encodable, forKey key: Key) throws {
        try value.encode(to: SlotEncoder(slot: slot.child(forKey: key.stringValue), codingPath: codingPath + [key]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let child = slot.child(forKey: key.stringValue)
        child.makeObject()
        return KeyedEncodingContainer(KeyedSlotContainer<NestedKey>(slot: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = slot.child(forKey: key.stringValue)
        child.makeArray()
        return UnkeyedSlotContainer(slot: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        SlotEncoder(slot: slot.child(forKey: "super"), codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        SlotEncoder(slot: slot.child(forKey: key.stringValue), codingPath: codingPath + [key])
    }
}

struct UnkeyedSlotContainer: UnkeyedEncodingContainer {
    let slot: EncodingSlot
    let codingPath: [any CodingKey]
    var count: Int { slot.count }

    private struct IndexKey: CodingKey {
        let intValue: Int?
        var stringValue: String { String(intValue ?? 0) }
        init(_ index: Int) { intValue = index }
        init?(stringValue: String) { return nil }
        init?(intValue: Int) { self.intValue = intValue }
    }

    private var nextPath: [any CodingKey] { codingPath + [IndexKey(count)] }
    private func append(_ value: JSONValue) { slot.appendChild().content = .value(value) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(try PrimitiveEncoding.number(value, nextPath)) }
    mutating func encode(_ value: Float) throws { append(try PrimitiveEncoding.number(value, nextPath)) }
    mutating func encode(_ value: Int) throws { append(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: Int8) throws { append(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: Int16) throws { append(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: Int32) throws { append(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: Int64) throws { append(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: UInt) throws { append(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: UInt8) throws { append(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: UInt16) throws { append(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: UInt32) throws { append(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: UInt64) throws { append(PrimitiveEncoding.number(value)) }

    mutating func encode(_ value: some Encodable) throws {
        let path = nextPath
        try value.encode(to: SlotEncoder(slot: slot.appendChild(), codingPath: path))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = nextPath
        let child = slot.appendChild()
        child.makeObject()
        return KeyedEncodingContainer(KeyedSlotContainer<NestedKey>(slot: child, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = nextPath
        let child = slot.appendChild()
        child.makeArray()
        return UnkeyedSlotContainer(slot: child, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let path = nextPath
        return SlotEncoder(slot: slot.appendChild(), codingPath: path)
    }
}

struct SingleSlotContainer: SingleValueEncodingContainer {
    let slot: EncodingSlot
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { slot.content = .value(.null) }
    mutating func encode(_ value: Bool) throws { slot.content = .value(.bool(value)) }
    mutating func encode(_ value: String) throws { slot.content = .value(.string(value)) }
    mutating func encode(_ value: Double) throws { slot.content = .value(try PrimitiveEncoding.number(value, codingPath)) }
    mutating func encode(_ value: Float) throws { slot.content = .value(try PrimitiveEncoding.number(value, codingPath)) }
    mutating func encode(_ value: Int) throws { slot.content = .value(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: Int8) throws { slot.content = .value(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: Int16) throws { slot.content = .value(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: Int32) throws { slot.content = .value(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: Int64) throws { slot.content = .value(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: UInt) throws { slot.content = .value(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: UInt8) throws { slot.content = .value(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: UInt16) throws { slot.content = .value(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: UInt32) throws { slot.content = .value(PrimitiveEncoding.number(value)) }
    mutating func encode(_ value: UInt64) throws { slot.content = .value(PrimitiveEncoding.number(value)) }

    mutating func encode(_ value: some Encodable) throws {
        if let json = value as? JSONValue {
            slot.content = .value(json)
            return
        }
        try value.encode(to: SlotEncoder(slot: slot, codingPath: codingPath))
    }
}
