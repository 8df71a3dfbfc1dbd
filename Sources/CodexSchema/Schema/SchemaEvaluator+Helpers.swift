/// Keyword helpers of ``SchemaEvaluator``: type and key matching, enum membership, error recording.
extension SchemaEvaluator {
    @inline(__always)
    func matches(_ mask: UInt8, _ at: Int) -> Bool {
        typealias Bit = SchemaProgram.TypeBit
        switch tape.kind(at) {
        case .null: return mask & Bit.null != 0
        case .false, .true: return mask & Bit.boolean != 0
        case .object: return mask & Bit.object != 0
        case .array: return mask & Bit.array != 0
        case .string: return mask & Bit.string != 0
        case .integer: return mask & (Bit.number | Bit.integer) != 0
        case .number:
            if mask & Bit.number != 0 { return true }
            return mask & Bit.integer != 0 && tape.number(at).isInteger
        }
    }

    @inline(__always)
    func keyEquals(_ span: (start: Int32, count: Int32), _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        guard Int(span.count) == key.count else { return false }
        let start = Int(span.start)
        return JSONTapeView.equal(UnsafeBufferPointer(rebasing: keyBytes[start..<(start + key.count)]), key)
    }

    /// The position within `span` of the rule whose key equals the key entry at `key`; `hint` first.
    /// Rules are told apart by length and head word; only keys longer than eight bytes compare the rest.
    @inline(__always)
    func rulePosition(_ span: SchemaProgram.Span, _ key: Int, hint: Int32) -> Int32? {
        let bytes = tape.bytes(key)
        let head = entryHead(key)
        let base = keyBytes.baseAddress
        if hint < span.count {
            let rule = rules[Int(span.start + hint)]
            if bytesEqual(bytes, head: head, base.map { $0 + Int(rule.keyStart) }, count: Int(rule.keyCount), candidateHead: rule.keyHead) { return hint }
        }
        for position in 0..<span.count where position != hint {
            let rule = rules[Int(span.start + position)]
            if bytesEqual(bytes, head: head, base.map { $0 + Int(rule.keyStart) }, count: Int(rule.keyCount), candidateHead: rule.keyHead) { return position }
        }
        return nil
    }

    /// ``headWord(_:)`` of the string entry at `index`: one load and a mask when eight bytes can be
    /// read from where it starts in the source (no branch on its length).
    @inline(__always)
    func entryHead(_ index: Int) -> UInt64 {
        let entry = tape.entries[index]
        let start = Int(entry.payload)
        if entry.flags & JSONTape.Flags.inArena == 0, let base = tape.source.baseAddress, start + 8 <= tape.source.count {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + start).loadUnaligned(as: UInt64.self))
            let count = Int(entry.count)
            return count >= 8 ? word : word & ((1 << UInt64(8 * count)) &- 1)
        }
        return headWord(tape.bytes(index))
    }

    /// `JSONNumber.compare(instance, bound)` for the number entry at `at` (whose `doubleValue` is
    /// `value`) and the bound `bound` of ``numbers``, with the same answers but no number copied in the
    /// common cases: two `Int64`s compare directly; otherwise unequal doubles decide, and only equal
    /// ones compare exactly.
    @inline(__always)
    func compareNumber(_ at: Int, _ value: Double, _ bound: Int32) -> Int {
        let key = numberKeys[Int(bound)]
        let entry = tape.entries[at]
        if entry.kind == .integer, key.isInteger { return entry.payload < key.integer ? -1 : (entry.payload == key.integer ? 0 : 1) }
        if value < key.double { return -1 }
        if value > key.double { return 1 }
        return JSONNumber.compare(tape.number(at), numbers[Int(bound)])
    }

    func objectHasKey(_ at: Int, _ ruleIndex: Int32) -> Bool {
        let rule = rules[Int(ruleIndex)]
        var key = at + 1
        for _ in 0..<tape.entries[at].count {
            if keyEquals((rule.keyStart, rule.keyCount), tape.bytes(key)) { return true }
            key = tape.next(key + 1)
        }
        return false
    }

    /// Inlined into the evaluator's entry: a call would copy the evaluator for a non-mutating method.
    @inline(__always)
    func enumContains(_ node: UnsafePointer<Node>, _ at: Int) -> Bool {
        let span = node.pointee.enumSpan
        if node.pointee.has(Flags.enumIsStrings) {
            guard tape.kind(at) == .string else { return false }
            let bytes = tape.bytes(at)
            let head = entryHead(at)
            let base = keyBytes.baseAddress
            // Probe the enum's hash table (keyed like the members' heads) until a member or a hole.
            let table = node.pointee.enumTable
            let size = Int(table.count)
            var slot = SchemaProgram.enumSlot(bytes.count, head, size: size)
            while true {
                let member = enumSlots[Int(table.start) + slot]
                if member < 0 { return false }
                let range = stringRanges[Int(member)]
                if bytesEqual(bytes, head: head, base.map { $0 + Int(range.start) }, count: Int(range.count), candidateHead: stringHeads[Int(member)]) {
                    return true
                }
                slot = (slot + 1) & (size - 1)
            }
        }
        for position in 0..<span.count where tape.equals(at, program.values[Int(span.start + position)]) { return true }
        return false
    }

    mutating func record(_ nodeIndex: Int32, _ keyword: String, _ message: String) {
        errorCount += 1
        guard errors.count < errorLimit else { return }
        var pointer = ""
        for component in path {
            pointer += "/"
            switch component {
            case .key(let key): pointer += JSONPointer.escape(tape.string(key))
            case .index(let index): pointer += String(index)
            }
        }
        let base = program.pointers[Int(nodeIndex)]
        let schemaPointer = keyword == "false" ? base : base + "/" + keyword
        errors.append(JSONValidationError(instancePointer: pointer, schemaPointer: schemaPointer, keyword: keyword, message: message))
    }
}
