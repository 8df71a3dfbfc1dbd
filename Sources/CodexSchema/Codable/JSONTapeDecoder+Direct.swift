/// Standard library types the tape decoder reads without going through their `init(from:)`: strings,
/// Booleans, the common numbers and arrays. Their `init(from:)` implementations only ask a single-value
/// container for the value (or walk an unkeyed container element by element), so reading the entry
/// directly gives the same value and the same error, without a container, a `Decoder` or a coding-path
/// node per value. Everything else goes through `init(from:)`.
enum JSONTapeDirectKind {
    case string, bool, double, float, int, int64, int32, uint64, uint
    /// Arrays of strings, integers, doubles and Booleans, read by code specialized for them (the generic
    /// array reading costs a metadata lookup for the array type and a conformance check per array).
    case strings, ints, doubles, bools
    case array(any JSONTapeDirectArray.Type)

    /// The direct reading of `type`, or `nil` when it has none.
    @inline(__always)
    init?(_ type: Any.Type) {
        if type == String.self { self = .string }
        else if type == Int.self { self = .int }
        else if type == Double.self { self = .double }
        else if type == Bool.self { self = .bool }
        else if type == Int64.self { self = .int64 }
        else if type == Float.self { self = .float }
        else if type == Int32.self { self = .int32 }
        else if type == UInt64.self { self = .uint64 }
        else if type == UInt.self { self = .uint }
        else if type == [String].self { self = .strings }
        else if type == [Int].self { self = .ints }
        else if type == [Double].self { self = .doubles }
        else if type == [Bool].self { self = .bools }
        else if let array = type as? any JSONTapeDirectArray.Type { self = .array(array) }
        else { return nil }
    }
}

/// An array whose elements the tape decoder reads itself (the standard library's `Array: Decodable`
/// reads them one by one from an unkeyed container, which is what this does, with the capacity reserved).
protocol JSONTapeDirectArray {
    static func decodeDirectly(_ source: JSONTapeDecodingSource, _ index: Int, _ path: () -> JSONTapeCodingPath) throws -> Self
}

extension Array: JSONTapeDirectArray where Element: Decodable {
    static func decodeDirectly(_ source: JSONTapeDecodingSource, _ index: Int, _ path: () -> JSONTapeCodingPath) throws -> [Element] {
        let kind = source.kind(index)
        guard kind == .array else { throw JSONDecodingRules.mismatch([JSONValue].self, kind, path().keys) }
        let count = source.count(index)
        var elements: [Element] = []
        elements.reserveCapacity(count)
        var position = index + 1
        let direct = JSONTapeDirectKind(Element.self)
        var scope: JSONTapeScope?
        for offset in 0..<count {
            if let direct, let element: Element = try source.decodeDirect(direct, at: position, path: { path().appending(.index(offset)) }) {
                elements.append(element)
            } else {
                // No direct reading (`direct` is nil for this element type): straight to `init(from:)`,
                // every element's path under the array's one scope.
                let parent = scope ?? path().parentScope()
                scope = parent
                elements.append(try JSONTapeValueDecoder(index: position, path: JSONTapeCodingPath(scope: parent, element: offset)).decodeIndirectly(Element.self))
            }
            position = source.next(position)
        }
        return elements
    }
}

extension JSONTapeDecodingSource {
    /// Reads the value at `index` directly as `T` (whose direct kind is `kind`); `nil` only if `T` is not
    /// the kind's type.
    @inline(__always)
    func decodeDirect<T>(_ kind: JSONTapeDirectKind, at index: Int, path: () -> JSONTapeCodingPath) throws -> T? {
        switch kind {
        case .string: return identity(try decodeString(index) { path().keys })
        case .bool: return identity(try decodeBool(index) { path().keys })
        case .double: return identity(try decodeDouble(index) { path().keys })
        case .float: return identity(try decodeFloat(index) { path().keys })
        case .int: return identity(try decodeInteger(index, as: Int.self) { path().keys })
        case .int64: return identity(try decodeInteger(index, as: Int64.self) { path().keys })
        case .int32: return identity(try decodeInteger(index, as: Int32.self) { path().keys })
        case .uint64: return identity(try decodeInteger(index, as: UInt64.self) { path().keys })
        case .uint: return identity(try decodeInteger(index, as: UInt.self) { path().keys })
        case .strings: return identity(try decodeArray(index, path) { try $0.decodeString($1, $2) })
        case .ints: return identity(try decodeArray(index, path) { try $0.decodeInteger($1, as: Int.self, $2) })
        case .doubles: return identity(try decodeArray(index, path) { try $0.decodeDouble($1, $2) })
        case .bools: return identity(try decodeArray(index, path) { try $0.decodeBool($1, $2) })
        case .array(let array): return try array.decodeDirectly(self, index, path) as? T
        }
    }

    /// The array at `index` with each element read by `element` (the same errors as the generic
    /// ``JSONTapeDirectArray`` reading).
    @inline(__always)
    private func decodeArray<Element>(
        _ index: Int, _ path: () -> JSONTapeCodingPath, _ element: (JSONTapeDecodingSource, Int, () -> [any CodingKey]) throws -> Element
    ) throws -> [Element] {
        let kind = kind(index)
        guard kind == .array else { throw JSONDecodingRules.mismatch([JSONValue].self, kind, path().keys) }
        let count = count(index)
        var elements: [Element] = []
        elements.reserveCapacity(count)
        var position = index + 1
        try withoutActuallyEscaping(path) { path in
            for offset in 0..<count {
                elements.append(try element(self, position) { path().appending(.index(offset)).keys })
                position = next(position)
            }
        }
        return elements
    }
}

/// `value` as `T` when `T` is its own type, without a dynamic cast (`as? T` in unspecialized generic
/// code goes through the runtime's cast machinery for every value).
@inline(__always)
func identity<Value, T>(_ value: Value) -> T? {
    guard Value.self == T.self else { return nil }
    return unsafeBitCast(value, to: T.self)
}
