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

    /// A property rule: a key (in ``bytes``) with its `properties` subschema and whether it is required.
    struct Rule {
        var keyStart: Int32
        var keyCount: Int32
        /// The `properties` subschema, or -1 for a key that is only `required`.
        var schema: Int32
        var isRequired: Bool
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
    var numbers: [JSONNumber] = []
    var values: [JSONValue] = []
    var limits = JSONSchemaLimits()

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
