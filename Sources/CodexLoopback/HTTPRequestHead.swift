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
    /// - Returns: Nil when the request line or a header line is malformed.
    static func parse(_ bytes: some Collection<UInt8>) -> HTTPRequestHead? {
        // Split the bytes, not a String: Swift treats "\r\n" as one Character.
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self)[...]
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let requestLine = lines.first else { return nil }
        let tokens = requestLine.split(separator: " ", omittingEmptySubsequences: true)
        guard tokens.count == 3, tokens[2].hasPrefix("HTTP/") else { return nil }
        var headers: [HTTPHeaderField] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else { return nil }
            let name = line[..<colon]
            guard !name.contains(" "), !name.contains("\t") else { return nil }
            let value = line[line.index(after: colon)...].trimmingASCIISpaces()
            headers.append(HTTPHeaderField(name: String(name), value: value))
        }
        var target = Substring(tokens[1])
        for scheme in ["http://", "https://"] where target.lowercased().hasPrefix(scheme) {
            let afterScheme = target.dropFirst(scheme.count)
            target = afterScheme.firstIndex(of: "/").map { afterScheme[$0...] } ?? "/"
        }
        let path: Substring
        var query: String?
        if let mark = target.firstIndex(of: "?") {
            path = target[..<mark]
            query = String(target[target.index(after: mark)...])
        } else {
            path = target
        }
        return HTTPRequestHead(
            method: String(tokens[0]),
            path: String(path),
            query: query,
            version: String(tokens[2]),
            headers: headers
        )
    }
}
