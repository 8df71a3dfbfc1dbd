import CodexTestSupport
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Drives `LoopbackHTTPServer` with Foundation's URLSession (libcurl on Linux) and with raw sockets.
@Suite struct LoopbackHTTPServerTests {
    /// A fresh session per test: no shared connection pool, cache or cookies between tests.
    private func makeSession(delegate: (any URLSessionDelegate)? = nil) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        // Far beyond any wait here: a request must never time out because the machine is busy.
        configuration.timeoutIntervalForRequest = 600
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    private func url(_ server: LoopbackHTTPServer, _ pathAndQuery: String) throws -> URL {
        try #require(URL(string: server.baseURL.absoluteString + pathAndQuery))
    }

    private func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func postWithJSONBodyIsRecordedExactlyAndTheReplyArrivesExactly() async throws {
        let replyBody = #"{"id":"resp_1","ok":true}"#
        let server = try LoopbackHTTPServer(replies: [
            .json(replyBody, status: 201, headers: [HTTPHeaderField(name: "X-Request-Id", value: "req_42")]),
        ])
        defer { server.shutdown() }
        let session = makeSession()
        defer { session.invalidateAndCancel() }
        let requestBody = #"{"model":"gpt-5","input":"héllo ✓"}"#
        var request = URLRequest(url: try url(server, "/v1/responses?stream=true&model=gpt-5"))
        request.httpMethod = "POST"
        request.httpBody = Data(requestBody.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer sk-test", forHTTPHeaderField: "Authorization")
        request.setValue("abc", forHTTPHeaderField: "X-Custom-Trace")

        let (data, response) = try await session.data(for: request)

        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 201)
        #expect([UInt8](data) == utf8(replyBody))
        #expect(http.value(forHTTPHeaderField: "x-request-id") == "req_42")
        #expect(http.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(http.value(forHTTPHeaderField: "Content-Length") == "\(replyBody.utf8.count)")

        let recorded = try #require(server.requests.first)
        #expect(server.requests.count == 1)
        #expect(recorded.method == "POST")
        #expect(recorded.path == "/v1/responses")
        #expect(recorded.query == "stream=true&model=gpt-5")
        #expect(recorded.body == utf8(requestBody))
        #expect(recorded.connectionID == 1)
        #expect(recorded.header("content-type") == "application/json")
        #expect(recorded.header("AUTHORIZATION") == "Bearer sk-test")
        #expect(recorded.header("x-custom-trace") == "abc")
        #expect(recorded.header("Content-Length") == "\(requestBody.utf8.count)")
        #expect(recorded.header("host") == "127.0.0.1:\(server.port)")
        #expect(recorded.header("X-Not-Sent") == nil)
        // Names are kept as received: the spelling URLRequest was given.
        #expect(recorded.headers.contains(HTTPHeaderField(name: "X-Custom-Trace", value: "abc")))
        #expect(recorded.headers.first?.name == "Host")
    }

    @Test func chunkedEventStreamArrivesIntactOnePieceAtATime() async throws {
        let chunks = ["event: response.created\ndata: {\"n\":1}\n\n", "data: {\"n\":2}\n\n", "data: [DONE]\n\n"]
        let server = try LoopbackHTTPServer(replies: [.sse(chunks, delayBetween: .milliseconds(150))])
        defer { server.shutdown() }
        let delegate = RecordingDataDelegate()
        let session = makeSession(delegate: delegate)
        defer { session.invalidateAndCancel() }

        session.dataTask(with: try url(server, "/v1/responses")).resume()

        #expect(await delegate.wait { $0.completion != nil })
        let snapshot = delegate.snapshot
        #expect(snapshot.completion == .success)
        #expect(snapshot.statusCode == 200)
        #expect(snapshot.headers["Content-Type"] == "text/event-stream; charset=utf-8")
        #expect(snapshot.headers["Transfer-Encoding"] == "chunked")
        #expect(snapshot.body == utf8(chunks.joined()))
        // 150 ms apart, every chunk reaches the delegate as its own callback.
        #expect(snapshot.pieces == chunks.map(utf8))
    }

    @Test func contentLengthAndCloseDelimitedFramingsArriveIntact() async throws {
        let chunks = ["data: one\n\n", "data: two\n\n", "data: three\n\n"]
        let server = try LoopbackHTTPServer(replies: [
            .sse(chunks, delayBetween: .milliseconds(50), framing: .contentLength),
            .sse(chunks, delayBetween: .milliseconds(50), framing: .closeDelimited),
        ])
        defer { server.shutdown() }
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        let (lengthData, lengthResponse) = try await session.data(from: try url(server, "/length"))
        let lengthHTTP = try #require(lengthResponse as? HTTPURLResponse)
        #expect([UInt8](lengthData) == utf8(chunks.joined()))
        #expect(lengthHTTP.value(forHTTPHeaderField: "Content-Length") == "\(chunks.joined().utf8.count)")
        #expect(lengthHTTP.value(forHTTPHeaderField: "Transfer-Encoding") == nil)

        let (closeData, closeResponse) = try await session.data(from: try url(server, "/close"))
        let closeHTTP = try #require(closeResponse as? HTTPURLResponse)
        #expect([UInt8](closeData) == utf8(chunks.joined()))
        #expect(closeHTTP.value(forHTTPHeaderField: "Connection") == "close")
        #expect(closeHTTP.value(forHTTPHeaderField: "Content-Length") == nil)
        #expect(closeHTTP.value(forHTTPHeaderField: "Transfer-Encoding") == nil)
        // The close-delimited reply ends its connection; the keep-alive one before it shared that connection.
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
        #expect(server.requests.map(\.path) == ["/length", "/close"])
        #expect(server.requests.map(\.connectionID) == [1, 1])
        #expect(server.openConnectionCount == 0)
    }

    @Test func sequentialRequestsOnOneSessionReuseTheConnection() async throws {
        let server = try LoopbackHTTPServer(replies: [.text("first"), .text("second", status: 202)])
        defer { server.shutdown() }
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        let clock = ContinuousClock()
        let (first, firstResponse) = try await session.data(from: try url(server, "/a"))
        let firstEnded = clock.now
        let (second, secondResponse) = try await session.data(from: try url(server, "/b?x=1"))
        let secondEnded = clock.now
        let (third, thirdResponse) = try await session.data(from: try url(server, "/c"))

        #expect(String(decoding: first, as: UTF8.self) == "first")
        #expect((firstResponse as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: second, as: UTF8.self) == "second")
        #expect((secondResponse as? HTTPURLResponse)?.statusCode == 202)
        #expect(String(decoding: third, as: UTF8.self) == "no scripted reply")
        #expect((thirdResponse as? HTTPURLResponse)?.statusCode == 500)
        #expect(server.requests.map(\.path) == ["/a", "/b", "/c"])
        #expect(server.requests.map(\.query) == [nil, "x=1", nil])
        // libcurl keeps the connection in its pool: all three requests share connection 1. It drops a
        // connection idle for more than 118 s (CURLOPT_MAXAGE_CONN), which only a starved sanitized run
        // reaches between two requests; then the next request opens connection 2 and nothing else changes.
        let longestIdle = max(secondEnded - firstEnded, clock.now - secondEnded)
        if longestIdle < .seconds(110) {
            #expect(server.requests.map(\.connectionID) == [1, 1, 1])
            #expect(server.openConnectionCount == 1)
            #expect(server.closedConnectionCount == 0)
        } else {
            #expect(Sanitizer.active != .none, "an ordinary run waited \(longestIdle) between two requests")
            #expect(Set(server.requests.map(\.connectionID)).count <= 3)
        }
    }

    @Test func cancellingDuringAHoldClosesTheConnection() async throws {
        let server = try LoopbackHTTPServer(replies: [
            ScriptedReply(parts: [.bytes(Array("first".utf8)), .hold, .bytes(Array("never".utf8))]),
        ])
        defer { server.shutdown() }
        let delegate = RecordingDataDelegate()
        let session = makeSession(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: try url(server, "/held"))
        task.resume()

        #expect(await delegate.wait { $0.body == Array("first".utf8) })
        #expect(delegate.snapshot.statusCode == 200)
        #expect(delegate.snapshot.headers["Content-Length"] == "10")
        #expect(server.closedConnectionCount == 0)
        task.cancel()

        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
        #expect(server.openConnectionCount == 0)
        #expect(await delegate.wait { $0.completion != nil })
        #expect(delegate.snapshot.completion == .failure(domain: NSURLErrorDomain, code: URLError.cancelled.rawValue))
        #expect(delegate.snapshot.body == Array("first".utf8))
    }

    @Test func releaseHeldLetsAParkedReplyFinish() async throws {
        let server = try LoopbackHTTPServer(replies: [
            ScriptedReply(parts: [.bytes(Array("before-".utf8)), .hold, .bytes(Array("after".utf8))], framing: .chunked),
        ])
        defer { server.shutdown() }
        let delegate = RecordingDataDelegate()
        let session = makeSession(delegate: delegate)
        defer { session.invalidateAndCancel() }
        session.dataTask(with: try url(server, "/held")).resume()

        #expect(await delegate.wait { $0.body == Array("before-".utf8) })
        #expect(delegate.snapshot.completion == nil, "the reply is parked at its hold")
        server.releaseHeld()

        #expect(await delegate.wait { $0.completion != nil })
        #expect(delegate.snapshot.completion == .success)
        #expect(delegate.snapshot.body == Array("before-after".utf8))
        #expect(server.openConnectionCount == 1)
    }

    @Test func releaseBeforeTheReplyReachesItsHoldStillCounts() async throws {
        let server = try LoopbackHTTPServer(replies: [
            ScriptedReply(parts: [.delay(.milliseconds(200)), .bytes(Array("a".utf8)), .hold, .bytes(Array("b".utf8))]),
        ])
        defer { server.shutdown() }
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        async let reply = session.data(from: try url(server, "/early"))
        #expect(await server.waitForRequests(count: 1, timeout: .hangGuard))
        server.releaseHeld()

        #expect(try await String(decoding: reply.0, as: UTF8.self) == "ab")
    }

    @Test func abruptCloseMidBodyIsAClientError() async throws {
        let server = try LoopbackHTTPServer(replies: [
            ScriptedReply(parts: [
                .bytes(Array("partial".utf8)), .delay(.milliseconds(50)), .closeAbruptly, .bytes(Array("-rest".utf8)),
            ]),
        ])
        defer { server.shutdown() }
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        let error = await #expect(throws: URLError.self) {
            try await session.data(from: try url(server, "/reset"))
        }
        #expect(error?.code == .networkConnectionLost)
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
        #expect(server.requests.count == 1)
    }

    @Test func rawChunkedUploadWithExpectContinueIsRecordedDecoded() async throws {
        let server = try LoopbackHTTPServer(replies: [.text("ok")])
        defer { server.shutdown() }
        let client = try RawSocketClient(port: server.port)

        try client.send(
            "POST /upload?kind=raw HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
                + "Expect: 100-continue\r\n\r\n"
        )
        #expect(try client.receive(until: "\r\n\r\n") == "HTTP/1.1 100 Continue\r\n\r\n")
        try client.send("5\r\nhello\r\n7;name=value\r\n, world\r\n1\r\n!\r\n0\r\nX-Trailer: t\r\n\r\n")
        let reply = try client.receive(until: "\r\n\r\nok")

        #expect(reply == "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\n\r\nok")
        #expect(await server.waitForRequests(count: 1, timeout: .hangGuard))
        let recorded = try #require(server.requests.first)
        #expect(recorded.method == "POST")
        #expect(recorded.path == "/upload")
        #expect(recorded.query == "kind=raw")
        #expect(recorded.body == Array("hello, world!".utf8))
        #expect(recorded.header("transfer-encoding") == "chunked")
        _ = consume client
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
    }

    @Test func streamedUploadArrivesChunkedAndIsRecordedDecoded() async throws {
        let server = try LoopbackHTTPServer(replies: [.text("stored")])
        defer { server.shutdown() }
        let session = makeSession()
        defer { session.invalidateAndCancel() }
        let payload = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var request = URLRequest(url: try url(server, "/files"))
        request.httpMethod = "PUT"
        request.httpBodyStream = InputStream(data: Data(payload))

        let (data, _) = try await session.data(for: request)

        #expect(String(decoding: data, as: UTF8.self) == "stored")
        let recorded = try #require(server.requests.first)
        // With a body stream (no known length) libcurl switches to chunked transfer coding.
        #expect(recorded.header("Transfer-Encoding") == "chunked")
        #expect(recorded.header("Content-Length") == nil)
        #expect(recorded.body == payload)
    }

    @Test func explicitExpectContinueFromURLSessionIsAnswered() async throws {
        let server = try LoopbackHTTPServer(replies: [.text("accepted")])
        defer { server.shutdown() }
        let session = makeSession()
        defer { session.invalidateAndCancel() }
        let payload = [UInt8](repeating: 0x5A, count: 2 * 1024 * 1024)
        var request = URLRequest(url: try url(server, "/big"))
        request.httpMethod = "POST"
        request.httpBody = Data(payload)
        request.setValue("100-continue", forHTTPHeaderField: "Expect")

        let (data, _) = try await session.data(for: request)

        #expect(String(decoding: data, as: UTF8.self) == "accepted")
        let recorded = try #require(server.requests.first)
        #expect(recorded.header("Expect") == "100-continue")
        #expect(recorded.header("Content-Length") == "\(payload.count)")
        #expect(recorded.body == payload)
    }

    @Test func largeBodiesWithoutExpectHeaderAreRecordedExactly() async throws {
        let server = try LoopbackHTTPServer(replies: [.json("{}")])
        defer { server.shutdown() }
        let session = makeSession()
        defer { session.invalidateAndCancel() }
        let payload = [UInt8](repeating: 0x41, count: 3 * 1024 * 1024)
        var request = URLRequest(url: try url(server, "/big"))
        request.httpMethod = "POST"
        request.httpBody = Data(payload)

        _ = try await session.data(for: request)

        let recorded = try #require(server.requests.first)
        // FoundationNetworking suppresses libcurl's automatic `Expect: 100-continue`, even for megabytes.
        #expect(recorded.header("Expect") == nil)
        #expect(recorded.body == payload)
    }

    @Test func rawKeepAliveServesSeveralRequestsAndReplacesScriptedFramingHeaders() async throws {
        let server = try LoopbackHTTPServer { request in
            ScriptedReply(
                status: 299,
                headers: [
                    HTTPHeaderField(name: "Content-Length", value: "999"),
                    HTTPHeaderField(name: "X-Path", value: request.path),
                    HTTPHeaderField(name: "transfer-encoding", value: "gzip"),
                ],
                parts: [.bytes(Array("body of \(request.path)".utf8))]
            )
        }
        defer { server.shutdown() }
        let client = try RawSocketClient(port: server.port)

        try client.send("GET /one HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.receive(until: "/one") == "HTTP/1.1 299 \r\nX-Path: /one\r\nContent-Length: 12\r\n\r\nbody of /one")
        try client.send("HEAD /two HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.receive(until: "\r\n\r\n") == "HTTP/1.1 299 \r\nX-Path: /two\r\nContent-Length: 12\r\n\r\n")
        try client.send("POST /three HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc")
        #expect(try client.receive(until: nil) == "HTTP/1.1 299 \r\nX-Path: /three\r\nContent-Length: 14\r\n\r\nbody of /three")

        #expect(server.requests.map(\.method) == ["GET", "HEAD", "POST"])
        #expect(server.requests.map(\.connectionID) == [1, 1, 1])
        #expect(server.requests.last?.body == Array("abc".utf8))
        _ = consume client
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
    }

    @Test func oversizedRequestHeadIsRejectedWith431() async throws {
        let server = try LoopbackHTTPServer(replies: [.text("unreachable")])
        defer { server.shutdown() }
        let client = try RawSocketClient(port: server.port)

        try client.send("GET / HTTP/1.1\r\nX-Big: " + String(repeating: "a", count: 70_000) + "\r\n\r\n")

        #expect(
            try client.receive(until: nil)
                == "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        )
        #expect(server.requests.isEmpty)
        _ = consume client
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
    }

    @Test func shutdownWithAHeldConnectionReturnsPromptly() async throws {
        let server = try LoopbackHTTPServer(replies: [
            ScriptedReply(parts: [.bytes(Array("x".utf8)), .hold, .bytes(Array("yz".utf8))]),
        ])
        let delegate = RecordingDataDelegate()
        let session = makeSession(delegate: delegate)
        defer { session.invalidateAndCancel() }
        session.dataTask(with: try url(server, "/held")).resume()
        #expect(await delegate.wait { $0.body == Array("x".utf8) })
        #expect(server.openConnectionCount == 1)

        // A shutdown that waited for the held reply would never return: a generous deadline tells the two.
        let elapsed = ContinuousClock().measure { server.shutdown() }

        #expect(elapsed < .seconds(60))
        #expect(server.openConnectionCount == 0)
        #expect(server.closedConnectionCount == 1)
        server.shutdown()
        #expect(server.closedConnectionCount == 1)
        // The client sees its reply cut short.
        #expect(await delegate.wait { $0.completion != nil })
        #expect(delegate.snapshot.completion != .success)
    }

    @Test func droppingTheServerShutsItDown() async throws {
        var server: LoopbackHTTPServer? = try LoopbackHTTPServer(replies: [])
        let port = try #require(server?.port)
        #expect(port > 0)
        _ = try RawSocketClient(port: port)
        weak let weakServer = server
        server = nil

        #expect(weakServer == nil)
        // deinit joined the accept thread, which closed the listener: nothing accepts on the port now.
        #expect(throws: RawSocketClient.Failure.systemCall("connect", ECONNREFUSED)) {
            _ = try RawSocketClient(port: port)
        }
    }
}

/// The bare client's reading of a response head, byte by byte.
@Suite struct RawSocketClientHeadTests {
    @Test func theHeadEndsAtTheFirstEmptyLine() {
        #expect(RawSocketClient.headEnd(in: Array("HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody\r\n\r\n".utf8)) == 25)
        #expect(RawSocketClient.headEnd(in: Array("HTTP/1.1 200 OK\r\nA: b\r\n\r".utf8)) == nil)
        #expect(RawSocketClient.headEnd(in: Array("\r\n\r".utf8)) == nil)
        #expect(RawSocketClient.headEnd(in: Array("\r\n\r\n".utf8)) == 4)
    }

    @Test func theContentLengthIsReadInAnyCaseWithSpacesAroundIt() {
        func length(_ head: String) -> Int? { RawSocketClient.contentLength(in: Array(head.utf8)[...]) }
        #expect(length("HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n") == 42)
        #expect(length("HTTP/1.1 200 OK\r\nX: 1\r\nCONTENT-LENGTH:\t7 \r\n\r\n") == 7)
        #expect(length("HTTP/1.1 200 OK\r\ncontent-length:0\r\n\r\n") == 0)
        #expect(length("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n") == nil)
        #expect(length("HTTP/1.1 200 OK\r\nContent-Length: 4x\r\n\r\n") == nil)
        #expect(length("HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n") == nil)
        // A control byte is not taken for the colon, nor a bracket for a letter.
        #expect(length("HTTP/1.1 200 OK\r\nContent-Length\u{1A} 5\r\n\r\n") == nil)
        #expect(length("HTTP/1.1 200 OK\r\n[ontent-length: 5\r\n\r\n") == nil)
    }

    @Test func aWholeExchangeReportsTheBodyLength() throws {
        let server = try LoopbackHTTPServer(keepsRequests: false) { _ in .json(#"{"ok":true}"#) }
        defer { server.shutdown() }
        let client = try RawSocketClient(port: server.port)
        for _ in 0..<3 {
            try client.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(try client.receiveResponse() == 11)
        }
    }
}
