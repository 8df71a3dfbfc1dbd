import CodexCore
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Both real HTTP clients (libcurl and URLSession) against the loopback server.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct HTTPClientTests {
    private func client(_ server: LoopbackHTTPServer, http: any HTTPClient, policy: RetryPolicy = .default,
                        timeouts: HTTPTimeouts = .init()) throws -> ResponsesClient {
        ResponsesClient(
            configuration: .init(endpoint: try ResponsesEndpoint(baseURL: server.baseURL.appendingPathComponent("api/codex"), profile: .chatGPT),
                                 timeouts: timeouts, retryPolicy: policy),
            httpClient: http, authProvider: CountingAuthProvider(), clock: ImmediateClock()
        )
    }

    /// Cuts bytes into chunks of varying odd sizes.
    private func oddChunks(_ bytes: [UInt8]) -> [String] {
        var chunks: [String] = []
        var offset = 0
        let sizes = [1, 7, 13, 251, 3, 1_024, 2]
        var index = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + sizes[index % sizes.count])
            chunks.append(String(decoding: bytes[offset..<end], as: UTF8.self))
            offset = end
            index += 1
        }
        return chunks
    }

    @Test(arguments: StreamFixtures.names, HTTPClientKind.allCases)
    func everyRecordedTranscriptDecodesThroughTheRealTransport(name: String, kind: HTTPClientKind) async throws {
        let bytes = try StreamFixtures.bytes(name)
        // Chunks must not split UTF-8 here (the server takes Strings); the framer's own tests split bytes anywhere.
        let chunks = String(decoding: bytes, as: UTF8.self).utf8.count == bytes.count && bytes.allSatisfy({ $0 < 0x80 })
            ? oddChunks(bytes) : [String(decoding: bytes, as: UTF8.self)]
        let server = try LoopbackHTTPServer(replies: [.sse(chunks)])
        defer { server.shutdown() }
        let expected = try StreamFixtures.expected(name).compactMap(\.type)
        var received: [String] = []
        do {
            for try await event in try client(server, http: kind.make(), policy: .disabled).stream(ResponsesRequest(model: "m")) {
                if case .rateLimits = event.kind, event.sequenceNumber == nil { continue }
                received.append(event.typeName)
            }
            #expect(received == expected)
        } catch let error as AgentRuntimeError {
            // The one recorded failure: everything before `error` arrives, then the typed error.
            #expect(name == "vercel-error")
            #expect(error.code == .quotaExceeded)
            #expect(received == Array(expected.prefix(2)))
        }
        let request = try #require(server.requests.first)
        #expect(request.method == "POST")
        #expect(request.path == "/api/codex/responses")
        #expect(request.body == ResponsesRequest(model: "m").body())
        #expect(request.header("authorization") == "Bearer token-1")
        #expect(request.header("ChatGPT-Account-Id") == "acct-1")
    }

    @Test(arguments: HTTPClientKind.allCases)
    func cancellingTheConsumerClosesTheConnection(kind: HTTPClientKind) async throws {
        let first = SSE.stream([SSE.created])
        let server = try LoopbackHTTPServer(replies: [.init(headers: [.init(name: "Content-Type", value: "text/event-stream")],
                                                           parts: [.bytes(Array(first.utf8)), .hold], framing: .chunked)])
        defer { server.shutdown() }
        let client = try client(server, http: kind.make())
        let received = AsyncStream<Void>.makeStream()
        let task = Task {
            var count = 0
            for try await _ in client.stream(ResponsesRequest(model: "m")) {
                count += 1
                received.continuation.yield()
            }
            return count
        }
        var events = received.stream.makeAsyncIterator()
        _ = await events.next()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // The idle timeout is 300 s: a close seen within the wait was made by the cancellation.
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
    }

    @Test(arguments: HTTPClientKind.allCases)
    func droppingTheIteratorClosesTheConnection(kind: HTTPClientKind) async throws {
        let first = SSE.stream([SSE.created])
        let server = try LoopbackHTTPServer(replies: [.init(parts: [.bytes(Array(first.utf8)), .hold], framing: .chunked)])
        defer { server.shutdown() }
        let client = try client(server, http: kind.make())
        for try await event in client.stream(ResponsesRequest(model: "m")) {
            #expect(event.typeName == "response.created")
            break
        }
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
    }

    /// Sends `request` through a client on `clock`, waits until the client's watchdog sleeps on it, then
    /// moves the clock `by` and returns what the exchange ended with (reading the body when `readBody`).
    private func timeout(
        _ kind: HTTPClientKind, _ request: HTTPRequest, advancing by: Duration, afterFirstChunk: Bool = false, readBody: Bool = false
    ) async throws -> AgentRuntimeError? {
        let clock = ManualClock()
        let http = kind.make(clock: clock)
        let chunk = AsyncStream<Void>.makeStream()
        let exchange = Task { () -> AgentRuntimeError? in
            do {
                let response = try await http.send(request)
                guard readBody else { return nil }
                for try await _ in response.body { chunk.continuation.yield() }
                return nil
            } catch let error as AgentRuntimeError {
                return error
            }
        }
        if afterFirstChunk {
            var chunks = chunk.stream.makeAsyncIterator()
            _ = await chunks.next()
        }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: by)
        return try await exchange.value
    }

    @Test(arguments: HTTPClientKind.allCases)
    func firstByteIdleAndTotalTimeoutsAreSeparate(kind: HTTPClientKind) async throws {
        // Time is the client's injected clock: each timeout fires exactly when the test moves it past its
        // limit, and no other limit is near.
        let holdBeforeHeaders = try LoopbackHTTPServer(replies: [.init(parts: [.hold, .bytes(Array("x".utf8))])])
        defer { holdBeforeHeaders.shutdown() }
        let firstByte = try await timeout(
            kind, HTTPRequest(method: "GET", url: holdBeforeHeaders.baseURL, timeouts: .init(firstByte: .milliseconds(300))), advancing: .milliseconds(301)
        )
        #expect(firstByte?.code == .timedOut)
        #expect(firstByte?.message == "the first byte timeout of 0.3 seconds passed")
        holdBeforeHeaders.releaseHeld()

        let holdMidBody = try LoopbackHTTPServer(replies: [.init(parts: [.bytes(Array("abc".utf8)), .hold, .bytes(Array("def".utf8))], framing: .chunked)])
        defer { holdMidBody.shutdown() }
        let idle = try await timeout(
            kind, HTTPRequest(method: "GET", url: holdMidBody.baseURL, timeouts: .init(idle: .milliseconds(300))),
            advancing: .milliseconds(301), afterFirstChunk: true, readBody: true
        )
        #expect(idle?.code == .timedOut)
        #expect(idle?.message == "the idle timeout of 0.3 seconds passed")
        holdMidBody.releaseHeld()

        // Bytes keep arriving (so the idle timeout never fires), then the body is held open: the exchange
        // cannot end on its own however slowly the client runs, only by the total timeout.
        let trickle = try LoopbackHTTPServer(replies: [.init(
            parts: Array(repeating: [ScriptedReply.Part.bytes(Array("t".utf8)), .delay(.milliseconds(100))], count: 5).flatMap { $0 } + [.hold],
            framing: .chunked
        )])
        defer { trickle.shutdown() }
        let total = try await timeout(
            kind, HTTPRequest(method: "GET", url: trickle.baseURL, timeouts: .init(idle: .seconds(2), total: .milliseconds(700))),
            advancing: .milliseconds(701), afterFirstChunk: true, readBody: true
        )
        #expect(total?.code == .timedOut)
        #expect(total?.message == "the total timeout of 0.7 seconds passed")
    }

    @Test(arguments: HTTPClientKind.allCases)
    func aTotalTimeoutReachesTheConsumerBeforeTheBytesAlreadyHeld(kind: HTTPClientKind) async throws {
        let chunk = [UInt8](repeating: 0x2E, count: 32 * 1024)
        let server = try LoopbackHTTPServer(replies: [.init(parts: [.bytes(chunk), .bytes(chunk), .bytes(chunk), .hold], framing: .chunked)])
        defer { server.shutdown() }
        let clock = ManualClock()
        let http = kind.make(clock: clock)
        let response = try await http.send(HTTPRequest(method: "GET", url: server.baseURL, timeouts: .init(total: .seconds(40))))
        // The consumer has read nothing; the server has sent 96 KiB, held by the client now.
        let sent = await Self.eventually { server.sentBodyByteCount == 3 * chunk.count }
        #expect(sent)
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(41))
        // The timeout stops the transfer (the server sees the close); only then does the consumer read.
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
        var iterator = response.body.makeAsyncIterator()
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await iterator.next() }
        #expect(error?.message == "the total timeout of 40.0 seconds passed")
    }

    private static func eventually(_ condition: @Sendable () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .hangGuard
        while !condition(), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        return condition()
    }

    @Test(arguments: HTTPClientKind.allCases)
    func connectTimeoutCoversARequestThatCannotBeSent(kind: HTTPClientKind) async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let body = [UInt8](repeating: 0x61, count: 32 * 1024 * 1024)
        let error = try await timeout(
            kind, HTTPRequest(
                method: "POST", url: URL(string: "http://127.0.0.1:\(listener.port)/x")!, body: body,
                timeouts: .init(connect: .milliseconds(400), firstByte: .seconds(10))
            ),
            advancing: .milliseconds(401)
        )
        #expect(error?.code == .timedOut)
        #expect(error?.message == "the connect timeout of 0.4 seconds passed")
    }

    @Test(arguments: HTTPClientKind.allCases)
    func anAbruptCloseBeforeOutputIsRetriedAndAfterOutputIsNot(kind: HTTPClientKind) async throws {
        let created = Array(SSE.stream([SSE.created]).utf8)
        let full = SSE.stream([SSE.created, SSE.delta("hi", 1), SSE.completed(2)])
        let server = try LoopbackHTTPServer(replies: [.init(parts: [.bytes(created), .closeAbruptly], framing: .chunked), .sse([full])])
        defer { server.shutdown() }
        var types: [String] = []
        for try await event in try client(server, http: kind.make()).stream(ResponsesRequest(model: "m")) { types.append(event.typeName) }
        #expect(types == ["response.created", "response.created", "response.output_text.delta", "response.completed"])
        #expect(server.requests.count == 2)

        let afterOutput = Array(SSE.stream([SSE.created, SSE.delta("hi", 1)]).utf8)
        let second = try LoopbackHTTPServer(replies: [.init(parts: [.bytes(afterOutput), .closeAbruptly], framing: .chunked), .sse([full])])
        defer { second.shutdown() }
        let error = await #expect(throws: AgentRuntimeError.self) {
            for try await _ in try client(second, http: kind.make()).stream(ResponsesRequest(model: "m")) {}
        }
        // A connection lost after output is the spec's `responses_stream_disconnected`, with the transport
        // failure kept as the cause.
        #expect(error?.code == .responsesStreamDisconnected)
        #expect((error?.underlying as? AgentRuntimeError)?.code == .transportFailure)
        // The reset as each engine reports it: curl's "failure when receiving data", URLSession's
        // "network connection lost".
        #expect(error?.interruption?.transportDomain == (kind == .curl ? "curl" : "NSURLErrorDomain"))
        #expect(error?.interruption?.transportCode == (kind == .curl ? 56 : -1005))
        #expect(error?.interruption?.hadOutput == true)
        #expect(error?.retry?.safety == .outputAlreadyEmitted)
        #expect(second.requests.count == 1)
    }

    @Test(arguments: HTTPClientKind.allCases)
    func errorBodiesComeFromTheFailedResponseItself(kind: HTTPClientKind) async throws {
        let server = try LoopbackHTTPServer(replies: [.json(#"{"error":{"code":"server_error","message":"boom"}}"#, status: 500, headers: [.init(name: "x-request-id", value: "req_7")])])
        defer { server.shutdown() }
        let error = await #expect(throws: AgentRuntimeError.self) {
            for try await _ in try client(server, http: kind.make(), policy: .disabled).stream(ResponsesRequest(model: "m")) {}
        }
        #expect(error?.code == .providerError)
        #expect(error?.http?.statusCode == 500)
        #expect(error?.http?.requestID == "req_7")
        #expect(error?.message == "HTTP 500: boom")
        #expect(server.requests.count == 1)
    }
}
