/// The strict, non-recursive JSON parser: UTF-8 bytes to a ``JSONTape``.
///
/// Open containers live on an explicit frame stack, so nesting depth is bounded only by the configured
/// limit, never by the call stack. Strings are scanned eight bytes at a time until a quote, backslash,
/// control character or non-ASCII byte appears; strings without escapes stay in the source text.
struct JSONTapeParser {
    struct Frame {
        let isObject: Bool
        let entryIndex: Int
        var count: UInt32 = 0
    }

    // Read and advanced by the string scanning in JSONTapeParser+Strings.swift too.
    let bytes: UnsafeBufferPointer<UInt8>
    let count: Int
    private let maximumDepth: Int
    var index = 0
    var tape = JSONTape()
    /// Source offsets of keys whose bytes went to the arena (they had escapes), by tape index; other
    /// keys' offsets follow from their entries.
    var escapedKeyOffsets: [Int: Int] = [:]
    private var frames: [Frame] = []

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.count = bytes.count
        self.maximumDepth = maximumDepth
    }

    /// A parser that fills recycled storage (cleared first), so repeated parses do not allocate.
    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int, reusing storage: inout JSONParseStorage) {
        self.init(bytes: bytes, maximumDepth: maximumDepth)
        swap(&tape, &storage.tape)
        swap(&frames, &storage.frames)
        // (Clearing an empty array is not free, and the arena, numbers and frames usually are empty.)
        if !tape.entries.isEmpty { tape.entries.removeAll(keepingCapacity: true) }
        if !tape.arena.isEmpty { tape.arena.removeAll(keepingCapacity: true) }
        if !tape.numbers.isEmpty { tape.numbers.removeAll(keepingCapacity: true) }
        if !frames.isEmpty { frames.removeAll(keepingCapacity: true) }
    }

    /// Hands the frame stack back for reuse (the tape is returned by ``parseDocument()``).
    mutating func recycle(into storage: inout JSONParseStorage) {
        swap(&frames, &storage.frames)
    }

    /// Hands the tape (as ``parseInPlace()`` left it) and the frame stack back, without copying.
    mutating func finish(into storage: inout JSONParseStorage) {
        swap(&tape, &storage.tape)
        swap(&frames, &storage.frames)
    }

    // MARK: - Document

    mutating func parseDocument() throws(CodexSchemaError) -> JSONTape {
        var observer = NoParseObserver()
        return try parseDocument(observing: &observer)
    }

    /// Parses the document, leaving the tape in the parser for ``finish(into:)``.
    mutating func parseInPlace() throws(CodexSchemaError) {
        var observer = NoParseObserver()
        try parseValue(observing: &observer)
    }

    /// Parses the document (see ``parseValue(observing:)``) and returns the tape.
    mutating func parseDocument<Observer: JSONTapeParseObserver>(observing observer: inout Observer) throws(CodexSchemaError) -> JSONTape {
        try parseValue(observing: &observer)
        return tape
    }

    /// Parses the document, telling `observer` as values start and complete, containers open and close
    /// and keys are read; the observer may cut finished values off the tape (a streaming validator
    /// keeps only what it still needs). With ``NoParseObserver`` this is the plain parse.
    mutating func parseValue<Observer: JSONTapeParseObserver>(observing observer: inout Observer) throws(CodexSchemaError) {
        if !Observer.isActive, tape.entries.capacity < 16 + count / 4 { tape.entries.reserveCapacity(16 + count / 4) }
        // The innermost open container's member count and kind live in locals (its record in `frames`
        // is brought up to date when a nested container opens), so counting a value touches no array.
        var topCount: UInt32 = 0
        var topIsObject = false
        skipWhitespace()
        while true {
            guard index < count else { throw error(.jsonUnexpectedEnd, "input ends where a value was expected") }
            if Observer.isActive { observer.valueWillStart(mark) }
            var completed = tape.entries.count
            switch bytes[index] {
            case UInt8(ascii: "{"):
                try checkDepth()
                index += 1
                skipWhitespace()
                let entryIndex = tape.entries.count
                tape.entries.append(JSONTape.Entry(kind: .object, flags: 0, count: 0, payload: Int64(entryIndex + 1)))
                if Observer.isActive { try observer.containerDidOpen(isObject: true, entry: entryIndex, depth: frames.count) }
                if index < count, bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    if Observer.isActive { _ = try observer.containerWillClose(entry: entryIndex, count: 0, tape: &tape) }
                } else {
                    if !frames.isEmpty { frames[frames.count - 1].count = topCount }
                    frames.append(Frame(isObject: true, entryIndex: entryIndex))
                    topCount = 0
                    topIsObject = true
                    try parseKey(observing: &observer)
                    continue
                }
            case UInt8(ascii: "["):
                try checkDepth()
                index += 1
                skipWhitespace()
                let entryIndex = tape.entries.count
                tape.entries.append(JSONTape.Entry(kind: .array, flags: 0, count: 0, payload: Int64(entryIndex + 1)))
                if Observer.isActive { try observer.containerDidOpen(isObject: false, entry: entryIndex, depth: frames.count) }
                if index < count, bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    if Observer.isActive { _ = try observer.containerWillClose(entry: entryIndex, count: 0, tape: &tape) }
                } else {
                    if !frames.isEmpty { frames[frames.count - 1].count = topCount }
                    frames.append(Frame(isObject: false, entryIndex: entryIndex))
                    topCount = 0
                    topIsObject = false
                    continue
                }
            case UInt8(ascii: "\""):
                try parseString()
            case UInt8(ascii: "0")...UInt8(ascii: "9") where Self.isShortInteger(bytes, from: index):
                // A non-negative integer of at most 18 digits ending in a delimiter (the common case):
                // read inline; anything else (fractions, exponents, leading zeros) takes the scanner.
                var value: Int64 = 0
                while index < count, bytes[index] &- UInt8(ascii: "0") < 10 {
                    value = value &* 10 &+ Int64(bytes[index] &- UInt8(ascii: "0"))
                    index += 1
                }
                tape.entries.append(JSONTape.Entry(kind: .integer, flags: 0, count: 0, payload: value))
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                var scanner = JSONNumberScanner(bytes: bytes, start: index)
                let number = try scanner.scan()
                index = scanner.end
                if case .int(let value) = number.storage {
                    tape.entries.append(JSONTape.Entry(kind: .integer, flags: 0, count: 0, payload: value))
                } else {
                    tape.entries.append(JSONTape.Entry(kind: .number, flags: 0, count: 0, payload: Int64(tape.numbers.count)))
                    tape.numbers.append(number)
                }
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                tape.entries.append(JSONTape.Entry(kind: .true, flags: 0, count: 0, payload: 0))
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                tape.entries.append(JSONTape.Entry(kind: .false, flags: 0, count: 0, payload: 0))
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                tape.entries.append(JSONTape.Entry(kind: .null, flags: 0, count: 0, payload: 0))
            default:
                throw error(.jsonUnexpectedCharacter, "unexpected character where a value was expected")
            }

            // A value is complete: count it in its container, closing the containers that end here.
            attaching: while true {
                if Observer.isActive, let cut = try observer.valueDidComplete(entry: completed, depth: frames.count, tape: &tape) { truncate(to: cut) }
                guard !frames.isEmpty else {
                    skipWhitespace()
                    if index < count { throw error(.jsonTrailingData, "unexpected data after the JSON value") }
                    return
                }
                topCount += 1
                skipWhitespace()
                guard index < count else { throw error(.jsonUnexpectedEnd, "input ends inside an array or object") }
                let next = bytes[index]
                let closer = topIsObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                if next == UInt8(ascii: ",") {
                    let commaOffset = index
                    index += 1
                    skipWhitespace()
                    if index < count, bytes[index] == closer {
                        throw CodexSchemaError(code: .jsonTrailingComma, message: "trailing comma", byteOffset: commaOffset)
                    }
                    if topIsObject { try parseKey(observing: &observer) }
                    break attaching
                }
                if next == closer {
                    index += 1
                    var frame = frames.removeLast()
                    frame.count = topCount
                    if let parent = frames.last {
                        topCount = parent.count
                        topIsObject = parent.isObject
                    }
                    let checksDuplicates = Observer.isActive ? try observer.containerWillClose(entry: frame.entryIndex, count: frame.count, tape: &tape) : false
                    try close(frame, checkingDuplicates: !checksDuplicates)
                    completed = frame.entryIndex
                    continue attaching
                }
                throw error(
                    .jsonUnexpectedCharacter,
                    topIsObject ? "expected ',' or '}' after an object member" : "expected ',' or ']' after an array element"
                )
            }
        }
    }

    /// Where the tape ends now.
    private var mark: JSONTape.Mark {
        JSONTape.Mark(entries: tape.entries.count, arena: tape.arena.count, numbers: tape.numbers.count)
    }

    /// Cuts the tape back to `mark` (values an observer no longer needs).
    private mutating func truncate(to mark: JSONTape.Mark) {
        tape.truncate(to: mark)
        if !escapedKeyOffsets.isEmpty { escapedKeyOffsets = escapedKeyOffsets.filter { $0.key < mark.entries } }
    }

    private mutating func checkDepth() throws(CodexSchemaError) {
        if frames.count >= maximumDepth {
            throw error(.jsonDepthLimitExceeded, "nesting is deeper than the limit of \(maximumDepth)")
        }
    }

    /// Whether the digits at `start` form an integer the inline path reads exactly as the scanner
    /// would: 1 to 18 digits, no leading zero (unless the number is `0`), then no `.`, `e`, `E` or digit.
    @inline(__always)
    private static func isShortInteger(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Bool {
        var end = start
        while end < bytes.count, bytes[end] &- UInt8(ascii: "0") < 10 {
            end += 1
            if end - start > 18 { return false }
        }
        if end - start > 1, bytes[start] == UInt8(ascii: "0") { return false }
        if end < bytes.count {
            let next = bytes[end]
            if next == UInt8(ascii: ".") || next == UInt8(ascii: "e") || next == UInt8(ascii: "E") { return false }
        }
        return true
    }

    @inline(__always)
    private mutating func parseKey<Observer: JSONTapeParseObserver>(observing observer: inout Observer) throws(CodexSchemaError) {
        guard index < count else { throw error(.jsonUnexpectedEnd, "input ends where an object key was expected") }
        guard bytes[index] == UInt8(ascii: "\"") else {
            throw error(.jsonUnexpectedCharacter, "expected a string key")
        }
        let keyOffset = index
        let escaped = try parseString()
        if Observer.isActive, let cut = try observer.keyDidParse(entry: tape.entries.count - 1, offset: keyOffset, tape: &tape) {
            truncate(to: cut)
        } else if escaped {
            escapedKeyOffsets[tape.entries.count - 1] = keyOffset
        }
        skipWhitespace()
        guard index < count else { throw error(.jsonUnexpectedEnd, "input ends where ':' was expected") }
        guard bytes[index] == UInt8(ascii: ":") else { throw error(.jsonUnexpectedCharacter, "expected ':' after an object key") }
        index += 1
        skipWhitespace()
    }

    private mutating func close(_ frame: Frame, checkingDuplicates: Bool) throws(CodexSchemaError) {
        tape.entries[frame.entryIndex].count = frame.count
        tape.entries[frame.entryIndex].payload = Int64(tape.entries.count)
        guard checkingDuplicates, frame.isObject, frame.count > 1, !keysDifferInLength(object: frame.entryIndex) else { return }
        if let duplicate = firstDuplicateKey(object: frame.entryIndex) {
            let entry = tape.entries[duplicate]
            let offset = escapedKeyOffsets[duplicate] ?? Int(entry.payload) - 1
            throw CodexSchemaError(code: .jsonDuplicateKey, message: "object has a duplicate key", byteOffset: offset)
        }
    }

    /// Whether the keys of the small object at `object` all differ in length (each under 64 bytes), so
    /// none can repeat another: one bit per length settles most objects, a stream event's among them,
    /// without reading a key's bytes. False sends the object to ``firstDuplicateKey(object:)``.
    @inline(__always)
    private func keysDifferInLength(object: Int) -> Bool {
        tape.entries.withUnsafeBufferPointer { entries in
            let memberCount = Int(entries[object].count)
            guard memberCount <= JSONObject.indexThreshold else { return false }
            var lengths: UInt64 = 0
            var key = object + 1
            for _ in 0..<memberCount {
                // A key's entry counts its bytes (unescaped, as keys are compared).
                let length = entries[key].count
                guard length < 64 else { return false }
                let bit: UInt64 = 1 << UInt64(length)
                guard lengths & bit == 0 else { return false }
                lengths |= bit
                let value = entries[key + 1]
                key = value.kind == .array || value.kind == .object ? Int(value.payload) : key + 2
            }
            return true
        }
    }

    /// The tape index of the first key of the object at `object` that repeats an earlier key.
    private func firstDuplicateKey(object: Int) -> Int? {
        let memberCount = Int(tape.entries[object].count)
        // A scratch list of key indices; small objects keep it on the stack.
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: memberCount) { keys -> Int? in
            tape.withView(source: bytes) { view -> Int? in
                if memberCount <= JSONObject.indexThreshold {
                    // Small objects: a signature per key (equal for equal keys, rarely equal otherwise)
                    // goes into a 256-bit filter; only a key whose filter bit is already set is compared
                    // with the earlier keys' signatures, and bytes only on an equal signature.
                    return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: memberCount + 4) { scratch -> Int? in
                        let filter = scratch.baseAddress! + memberCount
                        filter.initialize(repeating: 0, count: 4)
                        var key = object + 1
                        for position in 0..<memberCount {
                            keys[position] = key
                            let signature = Self.keySignature(view.bytes(key))
                            let bit = Int(truncatingIfNeeded: signature >> 56)
                            let mask: UInt64 = 1 << UInt64(bit & 63)
                            if filter[bit >> 6] & mask != 0 {
                                for earlier in 0..<position where scratch[earlier] == signature {
                                    if view.stringsEqual(keys[earlier], key) { return key }
                                }
                            }
                            filter[bit >> 6] |= mask
                            scratch[position] = signature
                            key = view.next(key + 1)
                        }
                        return nil
                    }
                }
                var key = object + 1
                for position in 0..<memberCount {
                    keys[position] = key
                    key = view.next(key + 1)
                }
                var seen = Set<[UInt8]>(minimumCapacity: memberCount)
                for key in keys where !seen.insert(Array(view.bytes(key))).inserted { return key }
                return nil
            }
        }
    }

    /// A hash of a key's bytes from its length and its first and last (up to) eight bytes, so keys of
    /// up to 16 bytes are covered entirely: equal keys get equal signatures.
    @inline(__always)
    private static func keySignature(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let length = key.count
        guard let base = key.baseAddress, length > 0 else { return 0 }
        let raw = UnsafeRawPointer(base)
        let head: UInt64
        let tail: UInt64
        if length >= 8 {
            head = raw.loadUnaligned(as: UInt64.self)
            tail = raw.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self)
        } else if length >= 4 {
            head = UInt64(raw.loadUnaligned(as: UInt32.self))
            tail = UInt64(raw.loadUnaligned(fromByteOffset: length - 4, as: UInt32.self))
        } else {
            head = UInt64(base[0]) << 16 | UInt64(base[length >> 1]) << 8 | UInt64(base[length - 1])
            tail = 0
        }
        return (head &* 0x9E37_79B9_7F4A_7C15) ^ (tail &+ UInt64(length) &* 0xC2B2_AE3D_27D4_EB4F).byteSwapped
    }
    // MARK: - Tokens

    @inline(__always)
    private mutating func skipWhitespace() {
        while index < count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
            default: return
            }
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(CodexSchemaError) {
        let length = literal.utf8CodeUnitCount
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: length)
        for offset in 0..<length {
            guard index + offset < count else {
                throw CodexSchemaError(code: .jsonUnexpectedEnd, message: "input ends inside a literal", byteOffset: count)
            }
            guard bytes[index + offset] == expected[offset] else {
                throw CodexSchemaError(code: .jsonUnexpectedCharacter, message: "invalid literal", byteOffset: index + offset)
            }
        }
        index += length
    }

    func error(_ code: CodexSchemaError.Code, _ message: String) -> CodexSchemaError {
        CodexSchemaError(code: code, message: message, byteOffset: index)
    }
}
