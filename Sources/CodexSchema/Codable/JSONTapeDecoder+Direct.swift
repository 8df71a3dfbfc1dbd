/// Standard library types the tape decoder reads without going through their `init(from:)`: strings,
/// Booleans, the common numbers and arrays. Their `init(from:)` implementations only ask a single-value
/// container for the value (or walk an unkeyed container element by element), so reading the entry
/// directly gives the same value and the same error, without a container, a `Decoder` or a coding-path
/// node per value. Everything else goes through `init(from:)`.
enum JSONTapeDirectKind {
    case string, bool, double, float, int, int64, int32, uint64, uint
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
        var base: JSONTapeCodingPath?
        for offset in 0..<count {
            if let direct, let element: Element = try source.decodeDirect(direct, at: position, path: { .index(offset, path()) }) {
                elements.append(element)
            } else {
                let parent = base ?? path()
                base = parent
                elements.append(try JSONTapeValueDecoder(source: source, index: position, path: .index(offset, parent)).decodeValue(Element.self))
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
        case .string: return try decodeString(index) { path().keys } as? T
        case .bool: return try decodeBool(index) { path().keys } as? T
        case .double: return try decodeDouble(index) { path().keys } as? T
        case .float: return try decodeFloat(index) { path().keys } as? T
        case .int: return try decodeInteger(index, as: Int.self) { path().keys } as? T
        case .int64: return try decodeInteger(index, as: Int64.self) { path().keys } as? T
        case .int32: return try decodeInteger(index, as: Int32.self) { path().keys } as? T
        case .uint64: return try decodeInteger(index, as: UInt64.self) { path().keys } as? T
        case .uint: return try decodeInteger(index, as: UInt.self) { path().keys } as? T
        case .array(let array): return try array.decodeDirectly(self, index, path) as? T
        }
    }
}
