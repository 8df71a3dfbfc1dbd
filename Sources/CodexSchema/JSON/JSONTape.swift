/// A parsed JSON document as a flat array of entries (a "tape"), the representation the validator works on.
///
/// Every value is one entry; arrays and objects are followed by their contents and record the index just
/// past their subtree, so siblings are reached without walking children. Object members are a key entry
/// followed by the value. Strings are byte ranges (in the source text when they had no escapes, else in
/// ``arena``); integers that fit 64 bits are stored inline, other numbers in ``numbers``. Nothing on the
/// tape is reference counted, so walking it costs no retain/release traffic.
@usableFromInline
struct JSONTape: Sendable {
    @usableFromInline
    enum Kind: UInt8, Sendable {
        case null, `false`, `true`, integer, number, string, array, object
    }

    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline var kind: Kind
        /// For strings: ``Flags`` bits.
        @usableFromInline var flags: UInt8
        /// Array elements, object members, or string bytes.
        @usableFromInline var count: UInt32
        /// Integer value; index into ``numbers``; string byte offset; or, for containers, the index just
        /// past the subtree.
        @usableFromInline var payload: Int64

        @inlinable
        init(kind: Kind, flags: UInt8, count: UInt32, payload: Int64) {
            self.kind = kind
            self.flags = flags
            self.count = count
            self.payload = payload
        }
    }

    @usableFromInline
    enum Flags {
        /// The string's bytes are in ``arena`` (it had escapes, or the tape was built from a value).
        @usableFromInline static let inArena: UInt8 = 1
        /// The string is ASCII, so its length in Unicode scalars is its byte count.
        @usableFromInline static let ascii: UInt8 = 2
    }

    var entries: [Entry] = []
    var arena: [UInt8] = []
    var numbers: [JSONNumber] = []

    /// Where the tape ends: counts of entries, arena bytes and numbers.
    struct Mark: Sendable, Equatable {
        var entries: Int
        var arena: Int
        var numbers: Int
    }

    /// Drops everything after `mark` (the storage is kept for reuse).
    mutating func truncate(to mark: Mark) {
        if entries.count > mark.entries { entries.removeLast(entries.count - mark.entries) }
        if arena.count > mark.arena { arena.removeLast(arena.count - mark.arena) }
        if numbers.count > mark.numbers { numbers.removeLast(numbers.count - mark.numbers) }
    }

    /// Runs `body` with raw access to the tape; `source` must be the text the tape was parsed from, or
    /// empty for a tape whose strings are all in the arena.
    func withView<Output, Failure: Error>(
        source: UnsafeBufferPointer<UInt8>, _ body: (JSONTapeView) throws(Failure) -> Output
    ) throws(Failure) -> Output {
        let outcome: Result<Output, Failure> = entries.withUnsafeBufferPointer { entries in
            arena.withUnsafeBufferPointer { arena in
                numbers.withUnsafeBufferPointer { numbers in
                    do throws(Failure) {
                        return .success(try body(JSONTapeView(entries: entries, arena: arena, source: source, numbers: numbers)))
                    } catch {
                        return .failure(error)
                    }
                }
            }
        }
        return try outcome.get()
    }
}

/// Borrowed, unsafe access to a ``JSONTape`` and its source text, valid only inside ``JSONTape/withView(source:_:)``.
///
/// Its hot accessors are inlinable, so readers in other modules (the Responses event decoder) walk the
/// tape without a call per member.
@usableFromInline
struct JSONTapeView {
    @usableFromInline let entries: UnsafeBufferPointer<JSONTape.Entry>
    @usableFromInline let arena: UnsafeBufferPointer<UInt8>
    @usableFromInline let source: UnsafeBufferPointer<UInt8>
    @usableFromInline let numbers: UnsafeBufferPointer<JSONNumber>

    @inlinable
    init(
        entries: UnsafeBufferPointer<JSONTape.Entry>, arena: UnsafeBufferPointer<UInt8>, source: UnsafeBufferPointer<UInt8>,
        numbers: UnsafeBufferPointer<JSONNumber>
    ) {
        self.entries = entries
        self.arena = arena
        self.source = source
        self.numbers = numbers
    }

    @inlinable @inline(__always)
    func kind(_ index: Int) -> JSONTape.Kind { entries[index].kind }

    /// The index just past the value at `index`.
    @inlinable @inline(__always)
    func next(_ index: Int) -> Int {
        let entry = entries[index]
        switch entry.kind {
        case .array, .object: return Int(entry.payload)
        default: return index + 1
        }
    }

    /// The UTF-8 bytes of the string entry at `index`.
    @inlinable @inline(__always)
    func bytes(_ index: Int) -> UnsafeBufferPointer<UInt8> {
        let entry = entries[index]
        let base = entry.flags & JSONTape.Flags.inArena != 0 ? arena : source
        return UnsafeBufferPointer(rebasing: base[Int(entry.payload)..<(Int(entry.payload) + Int(entry.count))])
    }

    /// The string at `index`.
    @inlinable
    func string(_ index: Int) -> String {
        String(decoding: bytes(index), as: UTF8.self)
    }

    /// The length in Unicode scalars of the string at `index`.
    func scalarCount(_ index: Int) -> Int {
        let entry = entries[index]
        if entry.flags & JSONTape.Flags.ascii != 0 { return Int(entry.count) }
        var count = 0
        for byte in bytes(index) where byte & 0xC0 != 0x80 { count += 1 }
        return count
    }

    /// The number at `index` (an integer or number entry).
    @inline(__always)
    func number(_ index: Int) -> JSONNumber {
        let entry = entries[index]
        if entry.kind == .integer { return JSONNumber(storage: .int(entry.payload)) }
        return numbers[Int(entry.payload)]
    }

    /// Whether two string entries have the same bytes.
    @inline(__always)
    func stringsEqual(_ first: Int, _ second: Int) -> Bool {
        entries[first].count == entries[second].count && Self.equal(bytes(first), bytes(second))
    }

    @inlinable @inline(__always)
    static func equal(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard let left = lhs.baseAddress, let right = rhs.baseAddress else { return lhs.count == 0 }
        return memcmpBytes(left, right, lhs.count)
    }
}

/// Byte comparison without importing libc into the module's interface.
@inlinable @inline(__always)
func memcmpBytes(_ lhs: UnsafePointer<UInt8>, _ rhs: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    var offset = 0
    while offset + 8 <= count {
        if UnsafeRawPointer(lhs + offset).loadUnaligned(as: UInt64.self)
            != UnsafeRawPointer(rhs + offset).loadUnaligned(as: UInt64.self) { return false }
        offset += 8
    }
    while offset < count {
        if lhs[offset] != rhs[offset] { return false }
        offset += 1
    }
    return true
}

/// Storage a parser can recycle between documents.
struct JSONParseStorage: Sendable {
    var tape = JSONTape()
    var frames: [JSONTapeParser.Frame] = []
}

extension JSONTape {
    /// Parses `buffer` strictly into recycled storage; on success the tape is in `storage.tape`.
    static func parse(_ buffer: UnsafeBufferPointer<UInt8>, options: JSONParsingOptions, reusing storage: inout JSONParseStorage) -> CodexSchemaError? {
        guard buffer.count <= options.maximumBytes else {
            return CodexSchemaError(
                code: .jsonSizeLimitExceeded, message: "input is larger than the limit of \(options.maximumBytes) bytes", byteOffset: options.maximumBytes
            )
        }
        var parser = JSONTapeParser(bytes: buffer, maximumDepth: options.maximumDepth, reusing: &storage)
        do {
            try parser.parseInPlace()
            parser.finish(into: &storage)
            return nil
        } catch {
            parser.recycle(into: &storage)
            return error
        }
    }

    /// Parses `buffer` strictly into a tape whose unescaped strings point into `buffer`.
    static func parse(_ buffer: UnsafeBufferPointer<UInt8>, options: JSONParsingOptions) -> Result<JSONTape, CodexSchemaError> {
        guard buffer.count <= options.maximumBytes else {
            return .failure(CodexSchemaError(
                code: .jsonSizeLimitExceeded,
                message: "input is larger than the limit of \(options.maximumBytes) bytes",
                byteOffset: options.maximumBytes
            ))
        }
        var parser = JSONTapeParser(bytes: buffer, maximumDepth: options.maximumDepth)
        do {
            return .success(try parser.parseDocument())
        } catch {
            return .failure(error)
        }
    }
}
