extension JSONDocument {
    /// The canonical JSON encoding of the document, byte for byte what ``JSONValue/canonicalBytes()``
    /// gives for ``value``, written from the parse tape without building the value: strings parsed
    /// without escapes are copied from the text, and each object's members are put in key order by
    /// their entries.
    ///
    /// - Returns: The UTF-8 bytes.
    public func canonicalBytes() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(text.count)
        withCanonicalChunks { output.append(contentsOf: $0) }
        return output
    }

    /// Hands the canonical encoding to `consume` in order, in buffered chunks of at most 64 KiB, so that
    /// a digest needs no copy of the whole. A run of 32 KiB or more (a long string's content) is handed
    /// over as one chunk of its own, of whatever size, without being copied.
    package func withCanonicalChunks(_ consume: (UnsafeBufferPointer<UInt8>) -> Void) {
        withView { view in
            var writer = JSONTapeCanonicalWriter(view: view)
            CanonicalJSONSink.write(to: consume) { writer.write(at: 0, into: &$0) }
        }
    }
}

/// Writes the canonical form of a tape's subtrees.
struct JSONTapeCanonicalWriter {
    let view: JSONTapeView
    /// Object members being written, as key entry indices in key order: each open object's members sit
    /// above its parent's, and are dropped when the object is done.
    private var order: [Int] = []

    init(view: JSONTapeView) {
        self.view = view
    }

    mutating func write(at index: Int, into sink: inout CanonicalJSONSink) {
        let entry = view.entries[index]
        switch entry.kind {
        case .null:
            sink.ascii("null")
        case .false:
            sink.ascii("false")
        case .true:
            sink.ascii("true")
        case .integer:
            sink.integer(entry.payload)
        case .number:
            sink.number(view.numbers[Int(entry.payload)])
        case .string:
            writeString(at: index, into: &sink)
        case .array:
            sink.byte(UInt8(ascii: "["))
            var child = index + 1
            for offset in 0..<Int(entry.count) {
                if offset > 0 { sink.byte(UInt8(ascii: ",")) }
                write(at: child, into: &sink)
                child = view.next(child)
            }
            sink.byte(UInt8(ascii: "]"))
        case .object:
            writeObject(at: index, count: Int(entry.count), into: &sink)
        }
    }

    private func writeString(at index: Int, into sink: inout CanonicalJSONSink) {
        // A string parsed without escapes cannot hold a quote, a backslash or a control character.
        sink.string(view.bytes(index), needsNoEscapes: view.entries[index].flags & JSONTape.Flags.inArena == 0)
    }

    private mutating func writeObject(at index: Int, count: Int, into sink: inout CanonicalJSONSink) {
        let base = order.count
        var key = index + 1
        var sorted = true
        for _ in 0..<count {
            if sorted, order.count > base, !CanonicalJSONSink.precedes(view.bytes(order[order.count - 1]), view.bytes(key)) { sorted = false }
            order.append(key)
            key = view.next(key + 1)
        }
        if !sorted { sortKeys(base..<order.count) }
        sink.byte(UInt8(ascii: "{"))
        for position in base..<(base + count) {
            if position > base { sink.byte(UInt8(ascii: ",")) }
            let member = order[position]
            writeString(at: member, into: &sink)
            sink.byte(UInt8(ascii: ":"))
            write(at: member + 1, into: &sink)
        }
        sink.byte(UInt8(ascii: "}"))
        order.removeLast(count)
    }

    /// Puts the key entries in `range` of ``order`` in the UTF-8 byte order of their keys (keys are
    /// distinct: the parser refuses duplicates).
    private mutating func sortKeys(_ range: Range<Int>) {
        let view = self.view
        if range.count <= 16 {
            for current in (range.lowerBound + 1)..<range.upperBound {
                let key = order[current]
                var slot = current
                while slot > range.lowerBound, CanonicalJSONSink.precedes(view.bytes(key), view.bytes(order[slot - 1])) {
                    order[slot] = order[slot - 1]
                    slot -= 1
                }
                order[slot] = key
            }
        } else {
            order[range].sort { CanonicalJSONSink.precedes(view.bytes($0), view.bytes($1)) }
        }
    }
}
