/// The members of one tape object, found by their keys' bytes (JSON compares keys by code points).
/// Small objects are searched linearly; objects with more than ``JSONObject/indexThreshold`` members
/// get a hash index, as ``JSONObject`` keeps one.
struct JSONTapeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: Int
    let path: JSONTapeCodingPath
    /// Value entry by key, for large objects; `nil` when small or when two keys are canonically
    /// equivalent (Swift's dictionary would merge them), in which case lookups scan.
    private let index: [String: Int]?

    init(object: Int, path: JSONTapeCodingPath) {
        self.object = object
        self.path = path
        index = path.source.count(object) > JSONObject.indexThreshold ? Self.buildIndex(path.source, object) : nil
    }

    @inline(__always)
    var source: JSONTapeDecodingSource { path.source }

    private static func buildIndex(_ source: JSONTapeDecodingSource, _ object: Int) -> [String: Int]? {
        var index = [String: Int](minimumCapacity: source.count(object))
        var child = object + 1
        for _ in 0..<source.count(object) {
            if index.updateValue(child + 1, forKey: source.string(child)) != nil { return nil }
            child = source.next(child + 1)
        }
        return index
    }

    var codingPath: [any CodingKey] { path.keys }

    var allKeys: [Key] {
        var keys: [Key] = []
        var child = object + 1
        for _ in 0..<source.count(object) {
            if let key = Key(stringValue: source.string(child)) { keys.append(key) }
            child = source.next(child + 1)
        }
        return keys
    }

    /// The value entry of the member named `name`, or `nil`.
    private func valueIndex(named name: String) -> Int? {
        var utf8 = name
        return utf8.withUTF8 { bytes in
            if let index {
                guard let position = index[name] else { return nil }
                if source.keyEquals(position - 1, bytes) { return position }
                // A canonically equivalent but different key: search exactly.
            }
            var child = object + 1
            for _ in 0..<source.count(object) {
                if source.keyEquals(child, bytes) { return child + 1 }
                child = source.next(child + 1)
            }
            return nil
        }
    }

    func contains(_ key: Key) -> Bool { valueIndex(named: key.stringValue) != nil }

    private func member(_ key: Key) throws -> Int {
        guard let value = valueIndex(named: key.stringValue) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key.stringValue)."))
        }
        return value
    }

    private func memberPath(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    func decodeNil(forKey key: Key) throws -> Bool { source.kind(try member(key)) == .null }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try source.decodeBool(try member(key)) { memberPath(key) } }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try source.decodeString(try member(key)) { memberPath(key) } }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try source.decodeDouble(try member(key)) { memberPath(key) } }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try source.decodeFloat(try member(key)) { memberPath(key) } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }

    @inline(__always)
    private func integer<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T {
        try source.decodeInteger(try member(key), as: type) { memberPath(key) }
    }

    private func decoder(_ key: Key) throws -> JSONTapeValueDecoder {
        JSONTapeValueDecoder(index: try member(key), path: path.appending(.key(key)))
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let value = try member(key)
        if let direct = JSONTapeDirectKind(T.self), let result: T = try source.decodeDirect(direct, at: value, path: { path.appending(.key(key)) }) {
            return result
        }
        return try JSONTapeValueDecoder(index: value, path: path.appending(.key(key))).decodeIndirectly(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try decoder(key).unkeyedContainer() }

    func superDecoder() throws -> any Decoder {
        JSONTapeValueDecoder(index: valueIndex(named: "super") ?? JSONTapeDecodingSource.absent, path: path.appending(.key(JSONIndexKey.superKey)))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONTapeValueDecoder(index: valueIndex(named: key.stringValue) ?? JSONTapeDecodingSource.absent, path: path.appending(.key(key)))
    }
}

/// The elements of one tape array, walked in order.
struct JSONTapeUnkeyedContainer: UnkeyedDecodingContainer {
    let path: JSONTapeCodingPath
    private let total: Int
    private(set) var currentIndex = 0
    /// The entry of the element at ``currentIndex``.
    private var position: Int

    init(array: Int, path: JSONTapeCodingPath) {
        self.path = path
        total = path.source.count(array)
        position = array + 1
    }

    @inline(__always)
    var source: JSONTapeDecodingSource { path.source }

    var codingPath: [any CodingKey] { path.keys }
    var count: Int? { total }
    var isAtEnd: Bool { currentIndex >= total }

    private var indexPath: [any CodingKey] { codingPath + [JSONIndexKey(index: currentIndex)] }

    private func current(_ type: Any.Type) throws -> Int {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: indexPath, debugDescription: "Unkeyed container is at end."))
        }
        return position
    }

    private mutating func advance() {
        position = source.next(position)
        currentIndex += 1
    }

    mutating func decodeNil() throws -> Bool {
        guard source.kind(try current(Never.self)) == .null else { return false }
        advance()
        return true
    }

    @inline(__always)
    private mutating func next<T>(_ type: T.Type, _ body: (JSONTapeDecodingSource, Int, () -> [any CodingKey]) throws -> T) throws -> T {
        let result = try body(source, try current(type)) { indexPath }
        advance()
        return result
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) { try $0.decodeBool($1, $2) } }
    mutating func decode(_ type: String.Type) throws -> String { try next(type) { try $0.decodeString($1, $2) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { try $0.decodeDouble($1, $2) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type) { try $0.decodeFloat($1, $2) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try $0.decodeInteger($1, as: type, $2) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try $0.decodeInteger($1, as: type, $2) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try $0.decodeInteger($1, as: type, $2) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try $0.decodeInteger($1, as: type, $2) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try $0.decodeInteger($1, as: type, $2) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try $0.decodeInteger($1, as: type, $2) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try $0.decodeInteger($1, as: type, $2) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try $0.decodeInteger($1, as: type, $2) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try $0.decodeInteger($1, as: type, $2) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try $0.decodeInteger($1, as: type, $2) } }

    private func elementDecoder(_ type: Any.Type) throws -> JSONTapeValueDecoder {
        JSONTapeValueDecoder(index: try current(type), path: path.appending(.index(currentIndex)))
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let element = try current(type)
        let result: T
        let offset = currentIndex
        if let direct = JSONTapeDirectKind(T.self), let value: T = try source.decodeDirect(direct, at: element, path: { path.appending(.index(offset)) }) {
            result = value
        } else {
            result = try JSONTapeValueDecoder(index: element, path: path.appending(.index(offset))).decodeIndirectly(type)
        }
        advance()
        return result
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let container = try elementDecoder(type).container(keyedBy: type)
        advance()
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let container = try elementDecoder([JSONValue].self).unkeyedContainer()
        advance()
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let decoder = try elementDecoder(JSONValue.self)
        advance()
        return decoder
    }
}
