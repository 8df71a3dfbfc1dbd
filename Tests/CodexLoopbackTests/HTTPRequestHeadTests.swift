@testable import CodexLoopback
import CodexTestSupport
import Testing

/// The request-head parser reads bytes. It must give what the earlier parser, which read the head as
/// Swift strings, gave for every head whose bytes hold no combining marks (there a string's characters
/// and HTTP's bytes differ, and the bytes are right): that parser is kept here as the reference.
@Suite struct HTTPRequestHeadTests {
    @Test func headsParseToTheirExactParts() throws {
        let head = try #require(HTTPRequestHead.parse(Array(
            "POST http://example.com/v1/responses?stream=1&x= HTTP/1.1\r\nHost: example.com\r\nX-Empty:\r\nX-Tabs:\t a b \t\r\n\r\n".utf8
        )))
        #expect(head.method == "POST")
        #expect(head.path == "/v1/responses")
        #expect(head.query == "stream=1&x=")
        #expect(head.version == "HTTP/1.1")
        #expect(head.headers == [
            HTTPHeaderField(name: "Host", value: "example.com"), HTTPHeaderField(name: "X-Empty", value: ""),
            HTTPHeaderField(name: "X-Tabs", value: "a b"),
        ])
        #expect(HTTPRequestHead.parse(Array("GET HTTPS://host HTTP/1.0\n\n".utf8))?.path == "/")
        #expect(HTTPRequestHead.parse(Array("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n".utf8)) == nil)
        #expect(HTTPRequestHead.parse(Array("GET / HTTP/1.1\r\n: x\r\n\r\n".utf8)) == nil)
        #expect(HTTPRequestHead.parse(Array("GET / SPDY/3\r\n\r\n".utf8)) == nil)
        #expect(HTTPRequestHead.parse(Array("\r\n\r\n".utf8)) == nil)
    }

    @Test func headerNamesMatchIgnoringASCIICaseOnly() {
        let field = HTTPHeaderField(name: "Content-LENGTH", value: "1")
        #expect(field.hasName("content-length"))
        #expect(!field.hasName("content-lengt"))
        #expect(!field.hasName("content_length"))
        // Only letters fold: `[` and `{` differ by the same bit as `A` and `a`.
        #expect(!HTTPHeaderField(name: "X[", value: "").hasName("x{"))
        #expect(HTTPHeaderField(name: "X[", value: "").hasName("x["))
        #expect(!HTTPHeaderField(name: "\u{C9}", value: "").hasName("\u{E9}"))
    }

    @Test func bytesParseAsTheStringParserDid() {
        var cases: [[UInt8]] = [
            "GET / HTTP/1.1\r\n\r\n", "GET  /a?b?c   HTTP/1.1\r\nA:b\r\n", "get http://h HTTP/1.1\r\n\r\n\r\n",
            "GET http://h/p?q HTTP/1.1\rX\r\nB: c\r\n", "GET / HTTP/1.1\r\nA : b\r\n", "GET / HTTP/1.1\r\n\tA: b\r\n",
            "GET / HTTP/1.1\r\nA:\r\n\r\n", "GET / HTTP/1.1\nA: b\n\n", "GET / HTTP/1.1", "GET /", "", "\n", "\r",
            "GET /caf\u{E9} HTTP/1.1\r\nX-\u{1F600}: \u{E9}t\u{E9}\r\n\r\n", "A B HTTP/\r\nh:\t\t\r\n",
        ].map { Array($0.utf8) }
        cases.append([0x47, 0x20, 0x2F, 0xFF, 0x20, 0x48, 0x54, 0x54, 0x50, 0x2F, 0x0D, 0x0A, 0x41, 0xE2, 0x3A, 0x20, 0xE2, 0x0D, 0x0A])
        // Random heads: request lines and header lines built from pieces that matter to the grammar,
        // and random runs of those bytes (no combining marks among them).
        func pick(_ choices: [[UInt8]], _ generator: inout SplitMix64) -> [UInt8] { choices[Int(generator.next() % UInt64(choices.count))] }
        let methods = ["GET", "POST", "get", "A"].map { Array($0.utf8) }
        let gaps = [" ", " ", "  ", "\t", " \t "].map { Array($0.utf8) }
        let targets = ["/", "/a", "http://h", "HTTP://h/p", "https://x/y?z", "?q", "/p?a=b?c", "hTTp://", "/\u{E9}"].map { Array($0.utf8) } + [[0xFF]]
        let versions = ["HTTP/1.1", "HTTP/1.0", "HTTP/", "HTTX/1.1"].map { Array($0.utf8) }
        let ends = ["\r\n", "\n", "\r", "\r\n"].map { Array($0.utf8) }
        let names = ["Host", "X-A", "Bad Name", "", "\tT", "A\u{E9}"].map { Array($0.utf8) } + [[0xE2]]
        let separators = [":", ": ", ":\t ", " :", "::"].map { Array($0.utf8) }
        let values = ["v", " v ", "", "\u{E9}", "a:b", "\t"].map { Array($0.utf8) } + [[0xFF]]
        let junk: [[UInt8]] = [[0x20], [0x09], [0x3A], [0x0D], [0x0A], [0x3F], [0x2F], Array("a".utf8), [0xFF], [0xE2]]
        var generator = SplitMix64(seed: 0x5EED)
        for round in 0..<5_000 {
            var bytes: [UInt8] = []
            if round % 5 == 4 {
                for _ in 0..<Int(generator.next() % 24) { bytes += pick(junk, &generator) }
            } else {
                bytes += pick(methods, &generator) + pick(gaps, &generator) + pick(targets, &generator) + pick(gaps, &generator)
                bytes += pick(versions, &generator) + pick(ends, &generator)
                for _ in 0..<Int(generator.next() % 4) {
                    bytes += pick(names, &generator) + pick(separators, &generator) + pick(values, &generator) + pick(ends, &generator)
                }
                bytes += pick(ends, &generator)
            }
            cases.append(bytes)
        }
        var parsed = 0
        for bytes in cases {
            let expected = Self.referenceParse(bytes)
            #expect(HTTPRequestHead.parse(bytes) == expected, "\(bytes)")
            if expected != nil { parsed += 1 }
        }
        // The random heads reach the success path too, not only refusals (the generator is seeded).
        #expect(parsed == 534)
    }

    /// The earlier parser, which read each line as a string.
    private static func referenceParse(_ bytes: [UInt8]) -> HTTPRequestHead? {
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
        return HTTPRequestHead(method: String(tokens[0]), path: String(path), query: query, version: String(tokens[2]), headers: headers)
    }
}
