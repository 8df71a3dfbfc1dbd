/// A parsed request line and header block.
struct HTTPRequestHead: Equatable {
    /// The method as sent.
    var method: String
    /// The path without query (absolute-form targets reduced to their path).
    var path: String
    /// The raw query text after `?`, nil without one.
    var query: String?
    /// The protocol version token, for example `HTTP/1.1`.
    var version: String
    /// The header lines in order.
    var headers: [HTTPHeaderField]

    /// Whether the connection stays open after this request's reply (HTTP/1.1 unless `Connection: close`;
    /// HTTP/1.0 only with `Connection: keep-alive`).
    var wantsKeepAlive: Bool {
        if headers.containsToken("close", inHeader: "Connection") { return false }
        if version == "HTTP/1.0" { return headers.containsToken("keep-alive", inHeader: "Connection") }
        return true
    }

    /// Whether the body uses chunked transfer coding.
    var isChunked: Bool {
        headers.contains { field in
            field.hasName("Transfer-Encoding")
                && field.value.split(separator: ",").last?.trimmingASCIISpaces().lowercased() == "chunked"
        }
    }

    /// Whether the client waits for `100 Continue` before sending the body.
    var expectsContinue: Bool {
        headers.firstValue(named: "Expect")?.trimmingASCIISpaces().lowercased() == "100-continue"
    }

    /// Parses the bytes of a request head (request line, header lines, blank line).
    ///
    /// Read as bytes (HTTP's own unit): lines end at LF with an optional CR before it, the request line
    /// is three space-separated tokens, a header line is a name without spaces or tabs, a colon and a
    /// value trimmed of spaces and tabs. Only the pieces kept become strings.
    /// - Returns: Nil when the request line or a header line is malformed.
    static func parse(_ bytes: some Collection<UInt8>) -> HTTPRequestHead? {
        let head = Array(bytes)
        return head.withUnsafeBufferPointer(parse(buffer:))
    }

    private static func parse(buffer bytes: UnsafeBufferPointer<UInt8>) -> HTTPRequestHead? {
        // Line ranges without their LF (and a CR before it); trailing empty lines dropped.
        var lines: [Range<Int>] = []
        var start = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == 0x0A {
            var end = index
            if end > start, bytes[end - 1] == 0x0D { end -= 1 }
            lines.append(start..<end)
            start = index + 1
        }
        while let last = lines.last, last.isEmpty { lines.removeLast() }
        guard let requestLine = lines.first else { return nil }
        var tokens: [Range<Int>] = []
        var tokenStart = requestLine.lowerBound
        for index in requestLine.lowerBound...requestLine.upperBound where index == requestLine.upperBound || bytes[index] == 0x20 {
            if index > tokenStart { tokens.append(tokenStart..<index) }
            tokenStart = index + 1
        }
        guard tokens.count == 3, hasPrefix(bytes, tokens[2], "HTTP/", ignoringCase: false) else { return nil }
        var headers: [HTTPHeaderField] = []
        headers.reserveCapacity(lines.count - 1)
        for line in lines.dropFirst() {
            guard let colon = line.first(where: { bytes[$0] == 0x3A }), colon != line.lowerBound else { return nil }
            guard !(line.lowerBound..<colon).contains(where: { bytes[$0] == 0x20 || bytes[$0] == 0x09 }) else { return nil }
            var valueStart = colon + 1
            var valueEnd = line.upperBound
            while valueStart < valueEnd, bytes[valueStart] == 0x20 || bytes[valueStart] == 0x09 { valueStart += 1 }
            while valueEnd > valueStart, bytes[valueEnd - 1] == 0x20 || bytes[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            headers.append(HTTPHeaderField(name: text(bytes, line.lowerBound..<colon), value: text(bytes, valueStart..<valueEnd)))
        }
        // An absolute-form target is reduced to its path.
        var target = tokens[1]
        for scheme in ["http://", "https://"] where hasPrefix(bytes, target, scheme, ignoringCase: true) {
            let afterScheme = (target.lowerBound + scheme.utf8.count)..<target.upperBound
            target = afterScheme.first(where: { bytes[$0] == 0x2F }).map { $0..<target.upperBound } ?? afterScheme.upperBound..<afterScheme.upperBound
        }
        var path = target
        var query: String?
        if let mark = target.first(where: { bytes[$0] == 0x3F }) {
            path = target.lowerBound..<mark
            query = text(bytes, (mark + 1)..<target.upperBound)
        }
        return HTTPRequestHead(
            method: text(bytes, tokens[0]),
            // A target that was only a scheme and authority is the root.
            path: target.isEmpty ? "/" : text(bytes, path),
            query: query,
            version: text(bytes, tokens[2]),
            headers: headers
        )
    }

    private static func text(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// Whether the bytes in `range` start with the ASCII `prefix` (its case ignored when asked).
    private static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ prefix: String, ignoringCase: Bool) -> Bool {
        let expected = Array(prefix.utf8)
        guard range.count >= expected.count else { return false }
        for (offset, byte) in expected.enumerated() {
            let actual = bytes[range.lowerBound + offset]
            if (ignoringCase ? ASCII.lowercased(actual) : actual) != byte { return false }
        }
        return true
    }
}
