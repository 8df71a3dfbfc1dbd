import CodexCore
import CodexKitTesting
import CodexTransport
import Foundation
import Testing

/// How the libcurl client reads a response head's lines into fields: the optional whitespace around
/// names and values removed (spaces and tabs only), a folded line joined to its field with one space,
/// UTF-8 kept, invalid UTF-8 repaired, the status from the status line's second word.
@Suite(.timeLimit(.minutes(2 * Sanitizer.slowdown))) struct CurlResponseHeadTests {
    @Test func fieldsAreReadAsTheirBytesSay() async throws {
        var head = Array("HTTP/1.1 201 Created\r\n".utf8)
        head += Array("X-Spaced: \t value  with  inner  spaces \t\r\n".utf8)
        head += Array("X-Tight:v\r\n".utf8)
        head += Array("X-Folded: first\r\n \t second part\r\n".utf8)
        head += Array("X-Text: café ☕\r\n".utf8)
        // A non-breaking space is text, not the optional whitespace around a value.
        head += Array("X-Nbsp: \u{00A0}kept\u{00A0}\r\n".utf8)
        head += Array("X-Bad: a".utf8) + [0xFF] + Array("b\r\n".utf8)
        head += Array("X-Empty:\r\n".utf8)
        head += Array("Content-Length: 2\r\n\r\nok".utf8)
        let reply = ScriptedReply(parts: [.bytes(head)], framing: .raw)
        let server = try LoopbackHTTPServer { _ in reply }
        defer { server.shutdown() }
        let response = try await CurlHTTPClient().send(HTTPRequest(method: "GET", url: server.baseURL))
        #expect(response.statusCode == 201)
        #expect(response.headers.fields == [
            .init(name: "X-Spaced", value: "value  with  inner  spaces"),
            .init(name: "X-Tight", value: "v"),
            .init(name: "X-Folded", value: "first second part"),
            .init(name: "X-Text", value: "café ☕"),
            .init(name: "X-Nbsp", value: "\u{00A0}kept\u{00A0}"),
            .init(name: "X-Bad", value: "a\u{FFFD}b"),
            .init(name: "X-Empty", value: ""),
            .init(name: "Content-Length", value: "2"),
        ])
        #expect(try await response.body.collect(upTo: 100) == Array("ok".utf8))
    }
}
