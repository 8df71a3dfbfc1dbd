/// Finds one fixed ASCII marker in a stream of UTF-8 chunks split anywhere, holding back only a suffix
/// that could still become the marker.
///
/// The marker must start with a byte that occurs nowhere else in it (`<` for the structured-output
/// markers), so the longest held-back suffix is simply the earliest one. Every byte is examined at most
/// `marker.count` times, so the work is linear in the stream length. Because the marker is ASCII,
/// every split this type makes falls on a UTF-8 scalar boundary.
struct StreamMarkerSearch: Sendable {
    /// The outcome of scanning one chunk.
    enum Step: Equatable {
        /// No complete marker: `released` is certainly not part of a marker; a possible marker prefix
        /// stays held back for the next chunk.
        case noMarker(released: [UInt8])
        /// The marker was found: the bytes before it and the bytes after it (the held-back suffix is
        /// consumed).
        case marker(before: [UInt8], after: [UInt8])
    }

    /// The marker being searched for, as UTF-8.
    let marker: [UInt8]
    /// Bytes held back because they are a proper prefix of the marker (shorter than the marker).
    private(set) var held: [UInt8] = []

    /// Creates a search for `marker`, which must be non-empty ASCII whose first byte does not recur.
    init(marker: String) {
        self.marker = Array(marker.utf8)
    }

    /// Scans the next chunk together with any held-back bytes.
    ///
    /// - Parameter chunk: The next bytes of the stream.
    /// - Returns: The released bytes, or the split around the first complete marker.
    mutating func scan(_ chunk: ArraySlice<UInt8>) -> Step {
        guard let first = marker.first else { return .noMarker(released: Array(chunk)) }
        var bytes = held
        bytes.append(contentsOf: chunk)
        held = []
        var index = 0
        while index < bytes.count {
            guard bytes[index] == first else {
                index += 1
                continue
            }
            let available = min(marker.count, bytes.count - index)
            var matched = 1
            while matched < available, bytes[index + matched] == marker[matched] { matched += 1 }
            if matched == marker.count {
                return .marker(before: Array(bytes[..<index]), after: Array(bytes[(index + matched)...]))
            }
            if matched == available {
                // The rest of the input is a proper prefix of the marker: hold it back.
                held = Array(bytes[index...])
                return .noMarker(released: Array(bytes[..<index]))
            }
            index += 1
        }
        return .noMarker(released: bytes)
    }

    /// Releases the held-back bytes (at the end of the stream they are not a marker).
    ///
    /// - Returns: The bytes that were held back, possibly empty.
    mutating func flush() -> [UInt8] {
        defer { held = [] }
        return held
    }
}
