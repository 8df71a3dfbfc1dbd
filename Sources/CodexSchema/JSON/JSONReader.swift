/// Fast, read-only access to parsed JSON without building ``JSONValue`` trees.
///
/// A reader is only valid inside the closure that provides it (like `withUnsafeBufferPointer`); do not
/// store it or its nodes. Use it where many small documents are read field by field, such as streamed
/// events:
///
/// ```swift
/// let type = try JSONReader.parse(bytes) { reader in
///     reader.root["type"]?.string
/// }
/// ```
public struct JSONReader {
    /// The JSON type of a node.
    public enum Kind: Sendable, Hashable {
        /// `null`.
        case null
        /// `true` or `false`.
        case bool
        /// A number.
        case number
        /// A string.
        case string
        /// An array.
        case array
        /// An object.
        case object
    }

    @usableFromInline let view: JSONTapeView

    init(view: JSONTapeView) {
        self.view = view
    }

    /// The top-level value.
    @inlinable
    public var root: Node { Node(view: view, index: 0) }

    /// Parses documents one after another, recycling its storage, so a stream of small documents is read
    /// without allocating per document.
    ///
    /// ```swift
    /// var parser = JSONReader.Parser()
    /// for event in events {
    ///     try parser.parse(event.dataBytes) { reader in type = reader.root["type"]?.string }
    /// }
    /// ```
    public struct Parser: Sendable {
        private var storage = JSONParseStorage()
        private let options: JSONParsingOptions

        /// Creates a parser.
        public init(options: JSONParsingOptions = .init()) {
            self.options = options
        }

        /// Parses `bytes` strictly and reads them inside `body`.
        ///
        /// - Throws: ``CodexSchemaError`` for malformed text, or what `body` throws.
        public mutating func parse(_ bytes: [UInt8], _ body: (JSONReader) throws -> Void) throws {
            try bytes.withUnsafeBufferPointer { buffer in try parse(buffer: buffer, body) }
        }

        /// Parses the bytes of `buffer` strictly and reads them inside `body` (the buffer must stay
        /// valid until `body` returns).
        ///
        /// - Throws: ``CodexSchemaError`` for malformed text, or what `body` throws.
        package mutating func parse(buffer: UnsafeBufferPointer<UInt8>, _ body: (JSONReader) throws -> Void) throws {
            if let error = JSONTape.parse(buffer, options: options, reusing: &storage) { throw error }
            try storage.tape.withView(source: buffer) { view in try body(JSONReader(view: view)) }
        }
    }

    /// Parses UTF-8 JSON text strictly and reads it, without copying the text.
    ///
    /// - Throws: ``CodexSchemaError`` for malformed text, or what `body` throws.
    public static func parse<Output>(
        _ bytes: [UInt8], options: JSONParsingOptions = .init(), _ body: (JSONReader) throws -> Output
    ) throws -> Output {
        try bytes.withUnsafeBufferPointer { buffer in
            let tape = try JSONTape.parse(buffer, options: options).get()
            return try tape.withView(source: buffer) { view in try body(JSONReader(view: view)) }
        }
    }

    /// One value in a reader.
    ///
    /// The accessors used per event by stream decoders are inlinable, so a caller in another module
    /// walks the tape directly.
    public struct Node {
        @usableFromInline let view: JSONTapeView
        @usableFromInline let index: Int

        @inlinable
        init(view: JSONTapeView, index: Int) {
            self.view = view
            self.index = index
        }

        /// The node's JSON type.
        @inlinable
        public var kind: Kind {
            switch view.kind(index) {
            case .null: return .null
            case .false, .true: return .bool
            case .integer, .number: return .number
            case .string: return .string
            case .array: return .array
            case .object: return .object
            }
        }

        /// The member named `key` of an object (code-point comparison), or `nil`.
        @inlinable
        public subscript(key: StaticString) -> Node? {
            let expected = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
            return member { JSONTapeView.equal(view.bytes($0), expected) }
        }

        /// The member named `key` of an object (code-point comparison), or `nil`. For keys known at
        /// compile time the subscript is faster.
        public func member(_ key: String) -> Node? {
            var key = key
            return key.withUTF8 { expected in member { JSONTapeView.equal(view.bytes($0), expected) } }
        }

        @inlinable
        func member(matching matches: (Int) -> Bool) -> Node? {
            guard view.kind(index) == .object else { return nil }
            var key = index + 1
            for _ in 0..<view.entries[index].count {
                if matches(key) { return Node(view: view, index: key + 1) }
                key = view.next(key + 1)
            }
            return nil
        }

        /// Calls `body` with each member's key bytes (UTF-8, valid only during the call) and value, in
        /// order, without creating strings. Does nothing for other kinds.
        @inlinable
        public func forEachMember(_ body: (UnsafeBufferPointer<UInt8>, Node) throws -> Void) rethrows {
            guard view.kind(index) == .object else { return }
            var key = index + 1
            for _ in 0..<view.entries[index].count {
                try body(view.bytes(key), Node(view: view, index: key + 1))
                key = view.next(key + 1)
            }
        }

        /// The string's UTF-8 bytes, valid only inside the reader's closure; `nil` for other kinds.
        @inlinable
        public var stringBytes: UnsafeBufferPointer<UInt8>? {
            view.kind(index) == .string ? view.bytes(index) : nil
        }

        /// The element at `position` of an array, or `nil`.
        public subscript(position: Int) -> Node? {
            guard view.kind(index) == .array, position >= 0, position < Int(view.entries[index].count) else { return nil }
            var element = index + 1
            for _ in 0..<position { element = view.next(element) }
            return Node(view: view, index: element)
        }

        /// The number of elements or members (0 for scalars).
        @inlinable
        public var count: Int {
            switch view.kind(index) {
            case .array, .object: return Int(view.entries[index].count)
            default: return 0
            }
        }

        /// The elements of an array (empty for other kinds).
        public var elements: [Node] {
            guard view.kind(index) == .array else { return [] }
            var result: [Node] = []
            result.reserveCapacity(count)
            var element = index + 1
            for _ in 0..<count {
                result.append(Node(view: view, index: element))
                element = view.next(element)
            }
            return result
        }

        /// The members of an object in order (empty for other kinds).
        public var members: [(key: String, value: Node)] {
            guard view.kind(index) == .object else { return [] }
            var result: [(key: String, value: Node)] = []
            var key = index + 1
            for _ in 0..<count {
                result.append((view.string(key), Node(view: view, index: key + 1)))
                key = view.next(key + 1)
            }
            return result
        }

        /// The string, or `nil` for other kinds.
        @inlinable
        public var string: String? {
            view.kind(index) == .string ? view.string(index) : nil
        }

        /// Whether this is a string equal to `text` (code points), without creating a `String`.
        @inlinable
        public func isString(_ text: StaticString) -> Bool {
            guard view.kind(index) == .string else { return false }
            return JSONTapeView.equal(view.bytes(index), UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }

        /// The number, or `nil` for other kinds.
        public var number: JSONNumber? {
            switch view.kind(index) {
            case .integer, .number: return view.number(index)
            default: return nil
            }
        }

        /// The number as `Int` when it is an integer in range, else `nil`.
        @inlinable
        public var int: Int? {
            if view.kind(index) == .integer { return Int(exactly: view.entries[index].payload) }
            return nil
        }

        /// The Boolean, or `nil` for other kinds.
        public var bool: Bool? {
            switch view.kind(index) {
            case .true: return true
            case .false: return false
            default: return nil
            }
        }

        /// Whether this is `null`.
        @inlinable
        public var isNull: Bool { view.kind(index) == .null }

        /// The subtree as a ``JSONValue``.
        public var value: JSONValue { view.value(at: index) }

        /// Where the node sits in its document (for decoders in this package that remember positions
        /// instead of nodes); ``sibling(at:)`` turns it back into a node.
        @inlinable
        package var position: Int { index }

        /// The node at `position` (a ``position`` of a node of the same document).
        @inlinable
        package func sibling(at position: Int) -> Node { Node(view: view, index: position) }
    }
}

extension JSONDocument {
    /// Reads the document through a ``JSONReader`` valid inside `body`.
    public func read<Output>(_ body: (JSONReader) throws -> Output) rethrows -> Output {
        try withView { view in try body(JSONReader(view: view)) }
    }
}
