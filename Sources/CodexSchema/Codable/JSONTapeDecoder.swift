import Foundation

/// Where a decoder or container sits in the document: a scope (the coding path up to it, and the
/// decode's source) and, for an array element, its offset kept inline. The elements of one array share
/// the array's scope, so a container whose members are all read directly allocates no path at all, and
/// copying a path (the standard library's container box copies its container on every call) retains one
/// reference. A key component gets a scope of its own, allocated only for a nested decoder.
struct JSONTapeCodingPath {
    let scope: JSONTapeScope
    /// The offset of an array element under ``scope``, or -1 when ``scope`` is the whole path.
    let element: Int

    /// The path of the root value of a decode over `source`.
    static func root(_ source: JSONTapeDecodingSource) -> JSONTapeCodingPath {
        JSONTapeCodingPath(scope: JSONTapeScope(source: source, parent: nil, component: .none), element: -1)
    }

    /// The source every reader on this path reads.
    @inline(__always)
    var source: JSONTapeDecodingSource { scope.source }

    /// This path extended by `component`.
    func appending(_ component: JSONTapeScope.Component) -> JSONTapeCodingPath {
        switch component {
        case .index(let offset): return JSONTapeCodingPath(scope: parentScope(), element: offset)
        case .key, .none: return JSONTapeCodingPath(scope: JSONTapeScope(source: source, parent: parentScope(), component: component), element: -1)
        }
    }

    /// The scope of this path, for paths below it (the elements of one array share one).
    func parentScope() -> JSONTapeScope {
        element < 0 ? scope : JSONTapeScope(source: source, parent: scope, component: .index(element))
    }

    var keys: [any CodingKey] {
        var reversed: [any CodingKey] = []
        if element >= 0 { reversed.append(JSONIndexKey(index: element)) }
        var scope: JSONTapeScope? = self.scope
        while let current = scope {
            switch current.component {
            case .none: break
            case .key(let key): reversed.append(key)
            case .index(let index): reversed.append(JSONIndexKey(index: index))
            }
            scope = current.parent
        }
        return reversed.reversed()
    }
}

/// A coding path up to some value, shared by the paths of that value's members or elements.
final class JSONTapeScope {
    /// One component of a coding path.
    enum Component {
        case none
        case key(any CodingKey)
        case index(Int)
    }

    let source: JSONTapeDecodingSource
    let parent: JSONTapeScope?
    /// The last component of this scope's path (`.none` for the root).
    let component: Component

    init(source: JSONTapeDecodingSource, parent: JSONTapeScope?, component: Component) {
        self.source = source
        self.parent = parent
        self.component = component
    }
}

/// The `Decoder` over one value of a parse tape: the same rules and errors as the decoder over a
/// ``JSONValue`` (`JSONValueDecoder.swift`), reading entries in place.
struct JSONTapeValueDecoder: Decoder {
    let index: Int
    let path: JSONTapeCodingPath

    @inline(__always)
    var source: JSONTapeDecodingSource { path.source }

    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let kind = source.kind(index)
        guard kind == .object else { throw JSONDecodingRules.mismatch([String: JSONValue].self, kind, codingPath) }
        return KeyedDecodingContainer(JSONTapeKeyedContainer<Key>(object: index, path: path))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let kind = source.kind(index)
        guard kind == .array else { throw JSONDecodingRules.mismatch([JSONValue].self, kind, codingPath) }
        return JSONTapeUnkeyedContainer(array: index, path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        JSONTapeSingleValue(index: index, path: path)
    }

    /// Decodes a value: strings, numbers, Booleans and arrays directly (see ``JSONTapeDirectKind``),
    /// anything else through ``decodeIndirectly(_:)``.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if let direct = JSONTapeDirectKind(T.self), let value: T = try source.decodeDirect(direct, at: index, path: { path }) { return value }
        return try decodeIndirectly(type)
    }

    /// Decodes a value through its `init(from:)`, with `JSONDecoder`'s special cases for Foundation types.
    func decodeIndirectly<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == Data.self {
            let text = try source.decodeString(index) { codingPath }
            return try cast(JSONDecodingRules.data(text) { codingPath })
        }
        if T.self == URL.self {
            let text = try source.decodeString(index) { codingPath }
            return try cast(JSONDecodingRules.url(text) { codingPath })
        }
        if T.self == Decimal.self {
            let kind = source.kind(index)
            guard kind == .integer || kind == .number, let decimal = Decimal(string: source.number(index).canonicalText) else {
                throw JSONDecodingRules.mismatch(Decimal.self, kind, codingPath)
            }
            return try cast(decimal)
        }
        return try T(from: self)
    }

    private func cast<T, Special>(_ special: Special) throws -> T {
        guard let result = special as? T else { throw JSONDecodingRules.mismatch(T.self, source.kind(index), codingPath) }
        return result
    }
}

/// Scalar reads; `path` is evaluated only for an error.
extension JSONTapeDecodingSource {
    @inline(__always)
    func decodeBool(_ index: Int, _ path: () -> [any CodingKey]) throws -> Bool {
        switch kind(index) {
        case .true: return true
        case .false: return false
        case let kind: throw JSONDecodingRules.mismatch(Bool.self, kind, path())
        }
    }

    @inline(__always)
    func decodeString(_ index: Int, _ path: () -> [any CodingKey]) throws -> String {
        let kind = kind(index)
        guard kind == .string else { throw JSONDecodingRules.mismatch(String.self, kind, path()) }
        return string(index)
    }

    @inline(__always)
    func decodeNumber(_ index: Int, _ type: Any.Type, _ path: () -> [any CodingKey]) throws -> JSONNumber {
        let kind = kind(index)
        guard kind == .integer || kind == .number else { throw JSONDecodingRules.mismatch(type, kind, path()) }
        return number(index)
    }

    @inline(__always)
    func decodeDouble(_ index: Int, _ path: () -> [any CodingKey]) throws -> Double {
        try JSONDecodingRules.double(try decodeNumber(index, Double.self, path), path)
    }

    @inline(__always)
    func decodeFloat(_ index: Int, _ path: () -> [any CodingKey]) throws -> Float {
        try JSONDecodingRules.float(try decodeNumber(index, Float.self, path), path)
    }

    @inline(__always)
    func decodeInteger<T: FixedWidthInteger>(_ index: Int, as type: T.Type, _ path: () -> [any CodingKey]) throws -> T {
        if index >= 0, entries[index].kind == .integer, let exact = T(exactly: entries[index].payload) { return exact }
        return try JSONDecodingRules.integer(try decodeNumber(index, type, path), as: type, path)
    }
}

struct JSONTapeSingleValue: SingleValueDecodingContainer {
    let index: Int
    let path: JSONTapeCodingPath

    @inline(__always)
    var source: JSONTapeDecodingSource { path.source }

    var codingPath: [any CodingKey] { path.keys }

    func decodeNil() -> Bool { source.kind(index) == .null }

    func decode(_ type: Bool.Type) throws -> Bool { try source.decodeBool(index) { codingPath } }
    func decode(_ type: String.Type) throws -> String { try source.decodeString(index) { codingPath } }
    func decode(_ type: Double.Type) throws -> Double { try source.decodeDouble(index) { codingPath } }
    func decode(_ type: Float.Type) throws -> Float { try source.decodeFloat(index) { codingPath } }
    func decode(_ type: Int.Type) throws -> Int { try source.decodeInteger(index, as: type) { codingPath } }
    func decode(_ type: Int8.Type) throws -> Int8 { try source.decodeInteger(index, as: type) { codingPath } }
    func decode(_ type: Int16.Type) throws -> Int16 { try source.decodeInteger(index, as: type) { codingPath } }
    func decode(_ type: Int32.Type) throws -> Int32 { try source.decodeInteger(index, as: type) { codingPath } }
    func decode(_ type: Int64.Type) throws -> Int64 { try source.decodeInteger(index, as: type) { codingPath } }
    func decode(_ type: UInt.Type) throws -> UInt { try source.decodeInteger(index, as: type) { codingPath } }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try source.decodeInteger(index, as: type) { codingPath } }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try source.decodeInteger(index, as: type) { codingPath } }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try source.decodeInteger(index, as: type) { codingPath } }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try source.decodeInteger(index, as: type) { codingPath } }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONTapeValueDecoder(index: index, path: path).decodeValue(type)
    }
}
