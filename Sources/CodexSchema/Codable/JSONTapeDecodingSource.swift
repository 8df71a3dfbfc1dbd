/// The parse tape and text one tape decode reads, shared by reference by every decoder and container of
/// that decode (one retain per copy instead of one per array).
///
/// Index `-1` stands for an absent value read as `null` (a missing super decoder's value); every reader
/// checks ``kind(_:)`` before it reads an entry's payload.
final class JSONTapeDecodingSource: Sendable {
    let entries: [JSONTape.Entry]
    let arena: [UInt8]
    let text: [UInt8]
    let numbers: [JSONNumber]

    init(_ document: JSONDocument) {
        entries = document.tape.entries
        arena = document.tape.arena
        text = document.text
        numbers = document.tape.numbers
    }

    static let absent = -1

    @inline(__always)
    func kind(_ index: Int) -> JSONTape.Kind {
        index < 0 ? .null : entries[index].kind
    }

    /// The index just past the value at `index`.
    @inline(__always)
    func next(_ index: Int) -> Int {
        let entry = entries[index]
        switch entry.kind {
        case .array, .object: return Int(entry.payload)
        default: return index + 1
        }
    }

    /// Elements or members of the container at `index`.
    @inline(__always)
    func count(_ index: Int) -> Int { Int(entries[index].count) }

    /// The string entry at `index`.
    func string(_ index: Int) -> String {
        let entry = entries[index]
        let start = Int(entry.payload)
        let end = start + Int(entry.count)
        let bytes = entry.flags & JSONTape.Flags.inArena != 0 ? arena : text
        return bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[start..<end]), as: UTF8.self) }
    }

    /// Whether the string entry at `index` has exactly the UTF-8 bytes of `key` (JSON compares keys by
    /// code points).
    @inline(__always)
    func keyEquals(_ index: Int, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        let entry = entries[index]
        guard Int(entry.count) == key.count else { return false }
        guard let keyBase = key.baseAddress else { return true }
        let start = Int(entry.payload)
        let bytes = entry.flags & JSONTape.Flags.inArena != 0 ? arena : text
        return bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, start + key.count <= buffer.count else { return false }
            return memcmpBytes(base + start, keyBase, key.count)
        }
    }

    /// The number at `index` (an integer or number entry).
    @inline(__always)
    func number(_ index: Int) -> JSONNumber {
        let entry = entries[index]
        if entry.kind == .integer { return JSONNumber(storage: .int(entry.payload)) }
        return numbers[Int(entry.payload)]
    }
}
