/// Splits the bytes a stdio server writes into lines, one JSON-RPC message each, enforcing the message
/// limit while reading: a line that grows past the limit is refused before its end arrives, so memory
/// follows the limit, not the server's output. Empty lines are skipped; a `\r` before the `\n` is dropped.
struct MCPLineFramer: Sendable {
    /// The longest line accepted, in bytes, without its newline.
    let maximumLineBytes: Int
    /// The start of the line not yet ended.
    private var pending: [UInt8] = []

    /// Creates a framer.
    init(maximumLineBytes: Int) {
        self.maximumLineBytes = maximumLineBytes
    }

    /// Appends what was read and returns the lines it completed, in order.
    ///
    /// - Throws: ``MCPError`` `mcp_message_too_large` when a line passes the limit (the framer must not
    ///   be used after that: the stream has lost its framing).
    mutating func append(_ bytes: some Collection<UInt8>) throws(MCPError) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var start = bytes.startIndex
        while let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            let piece = bytes[start..<newline]
            try checkLength(pending.count + piece.count)
            if pending.isEmpty {
                emit(Array(piece), into: &lines)
            } else {
                pending.append(contentsOf: piece)
                emit(pending, into: &lines)
                pending.removeAll(keepingCapacity: false)
            }
            start = bytes.index(after: newline)
        }
        let rest = bytes[start...]
        try checkLength(pending.count + rest.count)
        pending.append(contentsOf: rest)
        return lines
    }

    /// The bytes of a last line the stream ended without a newline, if any.
    mutating func finish() -> [UInt8]? {
        defer { pending.removeAll() }
        var lines: [[UInt8]] = []
        emit(pending, into: &lines)
        return lines.first
    }

    private func checkLength(_ count: Int) throws(MCPError) {
        // One more byte is allowed for a `\r` before the newline.
        guard count <= maximumLineBytes + 1 else {
            throw MCPError(code: .messageTooLarge, message: "a message is longer than the \(maximumLineBytes)-byte limit")
        }
    }

    private func emit(_ line: [UInt8], into lines: inout [[UInt8]]) {
        var line = line
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { return }
        lines.append(line)
    }
}
