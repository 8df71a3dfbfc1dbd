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
        withBytes(index) { String(decoding: $0, as: UTF8.self) }
    }

    /// Runs `body` with the UTF-8 bytes of the string entry at `index` (each store is read in place:
    /// choosing between the two arrays first would copy, and retain, one of them).
    @inline(__always)
    func withBytes<Result>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let entry = entries[index]
        let range = Int(entry.payload)..<(Int(entry.payload) + Int(entry.count))
        if entry.flags & JSONTape.Flags.inArena != 0 {
            return arena.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[range])) }
        }
        return text.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[range])) }
    }

    /// Whether the string entry at `index` has exactly the UTF-8 bytes of `key` (JSON compares keys by
    /// code points).
    @inline(__always)
    func keyEquals(_ index: Int, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        guard Int(entries[index].count) == key.count else { return false }
        return withBytes(index) { JSONTapeView.equal($0, key) }
    }

    /// The number at `index` (an integer or number entry).
    @inline(__always)
    func number(_ index: Int) -> JSONNumber {
        let entry = entries[index]
        if entry.kind == .integer { return JSONNumber(storage: .int(entry.payload)) }
        return numbers[Int(entry.payload)]
    }
}
