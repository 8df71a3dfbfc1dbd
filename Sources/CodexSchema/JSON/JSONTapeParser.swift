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

    private let bytes: UnsafeBufferPointer<UInt8>
    private let count: Int
    private let maximumDepth: Int
    private var index = 0
    private var tape = JSONTape()
    /// Source offsets of keys whose bytes went to the arena (they had escapes), by tape index; other
    /// keys' offsets follow from their entries.
    private var escapedKeyOffsets: [Int: Int] = [:]
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
        guard checkingDuplicates, frame.isObject, frame.count > 1 else { return }
        if let duplicate = firstDuplicateKey(object: frame.entryIndex) {
            let entry = tape.entries[duplicate]
            let offset = escapedKeyOffsets[duplicate] ?? Int(entry.payload) - 1
            throw CodexSchemaError(code: .jsonDuplicateKey, message: "object has a duplicate key", byteOffset: offset)
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

    private func error(_ code: CodexSchemaError.Code, _ message: String) -> CodexSchemaError {
        CodexSchemaError(code: code, message: message, byteOffset: index)
    }

    // MARK: - Strings

    /// Parses the string whose opening quote is at `index` onto the tape; leaves `index` after its
    /// closing quote. Returns whether it had escapes (its bytes went to the arena).
    @discardableResult @inline(__always)
    private mutating func parseString() throws(CodexSchemaError) -> Bool {
        let start = index + 1
        var cursor = start
        var ascii = true
        guard let base = bytes.baseAddress else { throw error(.jsonUnexpectedEnd, "input ends inside a string") }
        while true {
            // Eight bytes at a time while none is a quote, backslash, control or non-ASCII byte.
            while cursor + 8 <= count {
                let word = UnsafeRawPointer(base + cursor).loadUnaligned(as: UInt64.self)
                let mask = Self.attentionMask(word)
                if mask != 0 {
                    // The lowest flagged byte is exact (the tricks only misfire above a true hit).
                    cursor += mask.trailingZeroBitCount >> 3
                    break
                }
                cursor += 8
            }
            guard cursor < count else {
                throw CodexSchemaError(code: .jsonUnexpectedEnd, message: "input ends inside a string", byteOffset: count)
            }
            let byte = bytes[cursor]
            if byte == UInt8(ascii: "\"") {
                index = cursor + 1
                tape.entries.append(JSONTape.Entry(
                    kind: .string, flags: ascii ? JSONTape.Flags.ascii : 0, count: UInt32(cursor - start), payload: Int64(start)
                ))
                return false
            }
            if byte == UInt8(ascii: "\\") {
                try parseEscapedString(start: start, firstEscape: cursor, ascii: ascii)
                return true
            }
            if byte < 0x20 {
                throw CodexSchemaError(code: .jsonControlCharacter, message: "unescaped control character in a string", byteOffset: cursor)
            }
            if byte >= 0x80 {
                ascii = false
                cursor += try validateUTF8Sequence(at: cursor)
            } else {
                cursor += 1
            }
        }
    }

    @inline(__always)
    /// High bits set in the bytes of `word` (little-endian) that are a quote, a backslash, a control
    /// character or non-ASCII. Bytes above the first flagged one may be flagged spuriously.
    private static func attentionMask(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let hasQuote = (quote &- ones) & ~quote
        let hasBackslash = (backslash &- ones) & ~backslash
        let hasControl = (word &- ones &* 0x20) & ~word
        return ((hasQuote | hasBackslash | hasControl) | word) & highs
    }

    /// The slow path once a backslash appears: decode into the tape's arena.
    private mutating func parseEscapedString(start: Int, firstEscape: Int, ascii: Bool) throws(CodexSchemaError) {
        let arenaStart = tape.arena.count
        tape.arena.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<firstEscape]))
        var cursor = firstEscape
        while cursor < count {
            let byte = bytes[cursor]
            switch byte {
            case UInt8(ascii: "\""):
                index = cursor + 1
                var flags = JSONTape.Flags.inArena
                if !tape.arena[arenaStart...].contains(where: { $0 >= 0x80 }) { flags |= JSONTape.Flags.ascii }
                tape.entries.append(JSONTape.Entry(
                    kind: .string, flags: flags, count: UInt32(tape.arena.count - arenaStart), payload: Int64(arenaStart)
                ))
                return
            case UInt8(ascii: "\\"):
                cursor = try decodeEscape(at: cursor)
            case 0..<0x20:
                throw CodexSchemaError(code: .jsonControlCharacter, message: "unescaped control character in a string", byteOffset: cursor)
            case 0x80...:
                let length = try validateUTF8Sequence(at: cursor)
                tape.arena.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[cursor..<(cursor + length)]))
                cursor += length
            default:
                tape.arena.append(byte)
                cursor += 1
            }
        }
        throw CodexSchemaError(code: .jsonUnexpectedEnd, message: "input ends inside a string", byteOffset: count)
    }

    /// Decodes the escape whose backslash is at `position` into the arena; returns the next position.
    private mutating func decodeEscape(at position: Int) throws(CodexSchemaError) -> Int {
        guard position + 1 < count else {
            throw CodexSchemaError(code: .jsonUnexpectedEnd, message: "input ends inside an escape", byteOffset: count)
        }
        let simple: UInt8
        switch bytes[position + 1] {
        case UInt8(ascii: "\""): simple = 0x22
        case UInt8(ascii: "\\"): simple = 0x5C
        case UInt8(ascii: "/"): simple = 0x2F
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"):
            let unit = try hexUnit(at: position)
            var scalarValue = UInt32(unit)
            var next = position + 6
            if (0xD800...0xDBFF).contains(unit) {
                guard next + 1 < count, bytes[next] == UInt8(ascii: "\\"), bytes[next + 1] == UInt8(ascii: "u") else {
                    throw CodexSchemaError(code: .jsonLoneSurrogate, message: "high surrogate escape without a low surrogate", byteOffset: position)
                }
                let low = try hexUnit(at: next)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw CodexSchemaError(code: .jsonLoneSurrogate, message: "high surrogate escape without a low surrogate", byteOffset: position)
                }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                next += 6
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw CodexSchemaError(code: .jsonLoneSurrogate, message: "low surrogate escape without a high surrogate", byteOffset: position)
            }
            guard let scalar = Unicode.Scalar(scalarValue) else {
                throw CodexSchemaError(code: .jsonInvalidEscape, message: "escape is not a Unicode scalar", byteOffset: position)
            }
            tape.arena.append(contentsOf: UTF8.encode(scalar) ?? UTF8.EncodedScalar())
            return next
        default:
            throw CodexSchemaError(code: .jsonInvalidEscape, message: "invalid escape sequence", byteOffset: position)
        }
        tape.arena.append(simple)
        return position + 2
    }

    /// The UTF-16 unit of the `\uXXXX` escape whose backslash is at `position`.
    private func hexUnit(at position: Int) throws(CodexSchemaError) -> UInt16 {
        guard position + 6 <= count else {
            throw CodexSchemaError(code: .jsonUnexpectedEnd, message: "input ends inside a \\u escape", byteOffset: count)
        }
        var unit: UInt16 = 0
        for offset in 2..<6 {
            let byte = bytes[position + offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default:
                throw CodexSchemaError(code: .jsonInvalidEscape, message: "\\u escape needs four hex digits", byteOffset: position + offset)
            }
            unit = unit << 4 | UInt16(digit)
        }
        return unit
    }

    /// Validates the multi-byte UTF-8 sequence starting at `position` (RFC 3629: no overlong forms,
    /// no surrogates, nothing above U+10FFFF) and returns its length.
    private func validateUTF8Sequence(at position: Int) throws(CodexSchemaError) -> Int {
        let lead = bytes[position]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default:
            throw CodexSchemaError(code: .jsonInvalidUTF8, message: "invalid UTF-8 lead byte", byteOffset: position)
        }
        for offset in 1..<length {
            guard position + offset < count else {
                throw CodexSchemaError(code: .jsonInvalidUTF8, message: "truncated UTF-8 sequence", byteOffset: position)
            }
            let byte = bytes[position + offset]
            let (low, high) = offset == 1 ? (lower, upper) : (UInt8(0x80), UInt8(0xBF))
            guard byte >= low, byte <= high else {
                throw CodexSchemaError(code: .jsonInvalidUTF8, message: "invalid UTF-8 continuation byte", byteOffset: position)
            }
        }
        return length
    }
}
