/// A compiled schema as flat tables of plain records, so validation walks it without reference counting.
///
/// Nodes refer to each other by index; keys and enum strings live in one byte arena; numbers and other
/// constants live in side tables. Built by ``SchemaCompiler``; immutable afterwards.
struct SchemaProgram: Sendable {
    /// Bits of ``Node/typeMask``.
    enum TypeBit {
        static let null: UInt8 = 1
        static let boolean: UInt8 = 2
        static let object: UInt8 = 4
        static let array: UInt8 = 8
        static let number: UInt8 = 16
        static let string: UInt8 = 32
        static let integer: UInt8 = 64

        static let names: [(UInt8, String)] = [
            (null, "null"), (boolean, "boolean"), (object, "object"), (array, "array"),
            (number, "number"), (string, "string"), (integer, "integer"),
        ]
    }

    /// Which keyword groups a node has, so evaluation skips the rest without looking.
    enum NodeFlags {
        static let checksObjects: UInt16 = 1
        static let checksArrays: UInt16 = 2
        static let checksStrings: UInt16 = 4
        static let checksNumbers: UInt16 = 8
        static let hasApplicators: UInt16 = 16
        static let uniqueItems: UInt16 = 32
        static let hasType: UInt16 = 64
        static let hasEnum: UInt16 = 128
        static let enumIsStrings: UInt16 = 256
        static let hasConst: UInt16 = 512
        /// The node's only keyword is `$ref` (set by ``SchemaProgram/finishLookups()``).
        static let refOnly: UInt16 = 1024
    }

    /// A contiguous run in one of the side tables.
    struct Span {
        var start: Int32 = 0
        var count: Int32 = 0
    }

    /// One schema position. `-1` means "absent" for every index and bound.
    struct Node {
        /// -1 for an object schema, 0 for `false`, 1 for `true`.
        var constant: Int8 = -1
        var typeMask: UInt8 = 0
        var flags: UInt16 = 0
        /// Enum members: in ``stringRanges`` when ``NodeFlags/enumIsStrings``, else in ``values``.
        var enumSpan = Span()
        /// For string enums: a hash table of member indices in ``enumSlots`` (its size a power of two).
        var enumTable = Span()
        var constIndex: Int32 = -1
        var rules = Span()
        var requiredCount: Int32 = 0
        var additional: Int32 = -1
        var minProperties = -1
        var maxProperties = -1
        var items: Int32 = -1
        var minItems = -1
        var maxItems = -1
        var minLength = -1
        var maxLength = -1
        var minimum: Int32 = -1
        var maximum: Int32 = -1
        var exclusiveMinimum: Int32 = -1
        var exclusiveMaximum: Int32 = -1
        var multipleOf: Int32 = -1
        var allOf = Span()
        var anyOf = Span()
        var oneOf = Span()
        var not: Int32 = -1
        var ref: Int32 = -1

        @inline(__always)
        func has(_ flag: UInt16) -> Bool { flags & flag != 0 }
    }

    /// A number of ``numbers`` in plain fields: its value when it is an `Int64`, and its `Double`.
    struct NumberKey {
        var integer: Int64
        var isInteger: Bool
        var double: Double
    }

    /// A property rule: a key (in ``bytes``) with its `properties` subschema and whether it is required.
    struct Rule {
        var keyStart: Int32
        var keyCount: Int32
        /// The `properties` subschema, or -1 for a key that is only `required`.
        var schema: Int32
        var isRequired: Bool
        /// ``headWord(_:)`` of the key (set by ``SchemaProgram/finishLookups()``).
        var keyHead: UInt64 = 0
    }

    var nodes: [Node] = []
    /// The JSON pointer of each node, for error reports.
    var pointers: [String] = []
    var rules: [Rule] = []
    /// Property keys as strings, parallel to ``rules``, for error reports.
    var ruleKeys: [String] = []
    var children: [Int32] = []
    var bytes: [UInt8] = []
    var stringRanges: [Span] = []
    /// ``headWord(_:)`` of each of ``stringRanges``, parallel to it.
    var stringHeads: [UInt64] = []
    /// The string enums' hash tables: indices into ``stringRanges``, -1 for an empty slot.
    var enumSlots: [Int32] = []
    var numbers: [JSONNumber] = []
    /// What a bound check needs of each of ``numbers``, parallel to it (filled by ``finishLookups()``).
    var numberKeys: [NumberKey] = []
    var values: [JSONValue] = []
    var limits = JSONSchemaLimits()

    /// The slot a string of `count` bytes with head word `head` hashes to first, in a table of `size`
    /// (a power of two).
    @inline(__always)
    static func enumSlot(_ count: Int, _ head: UInt64, size: Int) -> Int {
        Int(truncatingIfNeeded: ((head &+ UInt64(count)) &* 0x9E37_79B9_7F4A_7C15) >> 40) & (size - 1)
    }

    /// Fills the lookup aids (once, after compiling): head words of rule keys and enum strings, the
    /// number keys, the string enums' hash tables and the ``NodeFlags/refOnly`` flags.
    mutating func finishLookups() {
        let (ruleHeads, stringHeads) = bytes.withUnsafeBufferPointer { arena in
            func head(_ start: Int32, _ count: Int32) -> UInt64 {
                headWord(UnsafeBufferPointer(rebasing: arena[Int(start)..<Int(start + count)]))
            }
            return (rules.map { head($0.keyStart, $0.keyCount) }, stringRanges.map { head($0.start, $0.count) })
        }
        for index in rules.indices { rules[index].keyHead = ruleHeads[index] }
        self.stringHeads = stringHeads
        numberKeys = numbers.map { number in
            if case .int(let value) = number.storage { return NumberKey(integer: value, isInteger: true, double: Double(value)) }
            return NumberKey(integer: 0, isInteger: false, double: number.doubleValue)
        }
        for index in nodes.indices {
            let node = nodes[index]
            if node.flags == NodeFlags.hasApplicators, node.ref >= 0, node.allOf.count == 0, node.anyOf.count == 0,
               node.oneOf.count == 0, node.not < 0 {
                nodes[index].flags |= NodeFlags.refOnly
            }
            guard node.flags & NodeFlags.hasEnum != 0, node.flags & NodeFlags.enumIsStrings != 0 else { continue }
            // At most half full, so a probe always reaches an empty slot.
            var size = 4
            while size < 2 * Int(node.enumSpan.count) { size *= 2 }
            let start = enumSlots.count
            enumSlots.append(contentsOf: repeatElement(-1, count: size))
            for member in Int(node.enumSpan.start)..<Int(node.enumSpan.start + node.enumSpan.count) {
                var slot = Self.enumSlot(Int(stringRanges[member].count), stringHeads[member], size: size)
                while enumSlots[start + slot] >= 0 { slot = (slot + 1) & (size - 1) }
                enumSlots[start + slot] = Int32(member)
            }
            nodes[index].enumTable = Span(start: Int32(start), count: Int32(size))
        }
    }

    /// Stores a string's bytes in the arena and returns their span.
    mutating func intern(_ text: String) -> Span {
        let start = bytes.count
        bytes.append(contentsOf: text.utf8)
        return Span(start: Int32(start), count: Int32(bytes.count - start))
    }

    /// The type names in a mask, for error messages.
    static func typeNames(_ mask: UInt8) -> String {
        TypeBit.names.filter { mask & $0.0 != 0 }.map(\.1).joined(separator: " or ")
    }
}

/// The first (up to) eight bytes of `bytes` as a little-endian word, zero-padded: with the length, a
/// one-compare filter for byte strings (equal strings have equal heads; strings of up to eight bytes
/// are equal exactly when their lengths and heads are).
@inline(__always)
func headWord(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
    let count = bytes.count
    guard let base = bytes.baseAddress, count > 0 else { return 0 }
    let raw = UnsafeRawPointer(base)
    if count >= 8 { return UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)) }
    if count >= 4 {
        // Two overlapping four-byte loads cover bytes 0..<count (the overlap holds the same bytes).
        let low = UInt64(UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self)))
        let high = UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)))
        return low | high << (8 * (count - 4))
    }
    return UInt64(base[0]) | UInt64(base[count >> 1]) << (8 * (count >> 1)) | UInt64(base[count - 1]) << (8 * (count - 1))
}

/// Whether `bytes` equal the `count` bytes at `candidate` whose head word is `candidateHead`
/// (`head` is ``headWord(_:)`` of `bytes`): lengths and heads first, the rest only when both match.
@inline(__always)
func bytesEqual(_ bytes: UnsafeBufferPointer<UInt8>, head: UInt64, _ candidate: UnsafePointer<UInt8>?, count: Int, candidateHead: UInt64) -> Bool {
    guard bytes.count == count, head == candidateHead else { return false }
    guard count > 8, let base = bytes.baseAddress, let candidate else { return true }
    if count <= 16 {
        // The last eight bytes (overlapping the head) finish the comparison in one load each.
        return UnsafeRawPointer(base).loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            == UnsafeRawPointer(candidate).loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
    }
    return memcmpBytes(base + 8, candidate + 8, count - 8)
}
