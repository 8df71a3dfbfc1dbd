/// Bytes received on a connection but not yet consumed by the request parser.
///
/// Consuming advances a start index instead of shifting the array; the consumed prefix is dropped once it
/// outgrows the unread rest, so parsing a large body stays linear.
struct InputBuffer {
    private var storage: [UInt8] = []
    private var start = 0

    /// The number of unread bytes.
    var count: Int { storage.count - start }

    /// The unread bytes.
    var unread: ArraySlice<UInt8> { storage[start...] }

    /// Appends received bytes.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        storage.append(contentsOf: bytes)
    }

    /// Removes and returns the first `length` unread bytes; `length` must not exceed `count`.
    mutating func take(_ length: Int) -> [UInt8] {
        let bytes = Array(storage[start..<(start + length)])
        start += length
        if start > 4096, start > storage.count - start {
            storage.removeFirst(start)
            start = 0
        }
        return bytes
    }

    /// Drops leading CR and LF bytes (blank lines a client may send before a request line).
    mutating func skipLeadingLineBreaks() {
        var skipped = 0
        for byte in unread {
            guard byte == 0x0D || byte == 0x0A else { break }
            skipped += 1
        }
        if skipped > 0 { _ = take(skipped) }
    }

    /// The offset, relative to the unread start, just past the first `\r\n\r\n` within the first `limit`
    /// unread bytes; nil when there is none.
    func offsetPastHeadTerminator(limit: Int) -> Int? {
        let bytes = unread.prefix(limit)
        var matched = 0
        for (offset, byte) in bytes.enumerated() {
            let expected: UInt8 = matched % 2 == 0 ? 0x0D : 0x0A
            if byte == expected {
                matched += 1
                if matched == 4 { return offset + 1 }
            } else {
                matched = byte == 0x0D ? 1 : 0
            }
        }
        return nil
    }

    /// The offset, relative to the unread start, just past the first LF within the first `limit` unread
    /// bytes; nil when there is none.
    func offsetPastLineFeed(limit: Int) -> Int? {
        unread.prefix(limit).firstIndex(of: 0x0A).map { $0 - start + 1 }
    }
}
