import CodexCore
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Both HTTP clients against a server that breaks the rules on purpose: malformed heads, huge heads,
/// compression bombs, endless and trickling streams, interim responses, resets, half-closes,
/// redirects, many stalled exchanges cancelled at once, hundreds of exchanges alternating good replies
/// and resets. Every case ends with a typed error or the right response, never a crash, a hang or
/// memory that follows the sender.
///
/// The URLSession client skips only the cases that stop the whole process inside FoundationNetworking
/// (a response head cut off before its blank line: swift-corelibs-foundation issue 5285, "Transfer
/// completed, but there's no response") and the back-pressure case it cannot pass (FoundationNetworking
/// cannot pause a transfer).
// The time limit only stops a hang: the child-process cases do real work whose length follows the CPU
// left over by the rest of the suite (URLSession's cancelled fast transfers take seconds each on a busy
// machine), so it is set well above their slowest stressed run.
@Suite(.timeLimit(.minutes(6 * Sanitizer.slowdown))) struct HostileServerTests {
    /// A server that answers every request with `reply`.
    private func server(_ reply: ScriptedReply) throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer { _ in reply }
    }

    private func raw(_ text: String, then parts: [ScriptedReply.Part] = []) -> ScriptedReply {
        ScriptedReply(parts: [.bytes(Array(text.utf8))] + parts, framing: .raw)
    }

    private func get(_ server: LoopbackHTTPServer, _ kind: HTTPClientKind, path: String = "/") async throws -> HTTPResponse {
        try await kind.make().send(HTTPRequest(method: "GET", url: server.baseURL.appendingPathComponent(path)))
    }

    /// Whether `kind` can be sent `case`; the URLSession client is skipped where FoundationNetworking
    /// would stop the test process.
    private static func survives(_ kind: HTTPClientKind, headCutShort: Bool) -> Bool {
        !(kind == .urlSession && headCutShort)
    }

    // MARK: - Heads

    @Test(arguments: HTTPClientKind.allCases)
    func aStatusLineAloneThenACloseIsATypedError(kind: HTTPClientKind) async throws {
        guard Self.survives(kind, headCutShort: true) else { return }
        let server = try server(raw("HTTP/1.1 200 OK\r\n"))
        defer { server.shutdown() }
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await get(server, kind) }
        #expect(error?.code == .transportFailure)
    }

    @Test(arguments: HTTPClientKind.allCases)
    func headersWithoutTheirBlankLineAreATypedError(kind: HTTPClientKind) async throws {
        guard Self.survives(kind, headCutShort: true) else { return }
        let server = try server(raw("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-More: yes\r\n"))
        defer { server.shutdown() }
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await get(server, kind) }
        #expect(error?.code == .transportFailure)
    }

    @Test(arguments: HTTPClientKind.allCases)
    func tenMegabytesOfHeadersAreRefused(kind: HTTPClientKind) async throws {
        let server = try server(raw("HTTP/1.1 200 OK\r\nX-Big: \(String(repeating: "a", count: 10_000_000))\r\nContent-Length: 2\r\n\r\nok"))
        defer { server.shutdown() }
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await get(server, kind) }
        #expect(error?.code == .transportFailure)
    }

    @Test(arguments: HTTPClientKind.allCases)
    func aHundredThousandHeadersAreRefused(kind: HTTPClientKind) async throws {
        let fields = (0..<100_000).map { "X-H\($0): v\r\n" }.joined()
        let server = try server(raw("HTTP/1.1 200 OK\r\n" + fields + "Content-Length: 2\r\n\r\nok"))
        defer { server.shutdown() }
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await get(server, kind) }
        #expect(error?.code == .transportFailure)
        if kind == .curl { #expect(error?.message == "the response head has more than 1000 fields") }
    }

    @Test(arguments: HTTPClientKind.allCases)
    func interimResponsesAreSkippedOrRefusedNeverTakenForTheAnswer(kind: HTTPClientKind) async throws {
        let server = try server(raw(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
                + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Final: yes\r\n\r\nok"
        ))
        defer { server.shutdown() }
        switch kind {
        case .curl:
            let response = try await get(server, kind)
            #expect(response.statusCode == 200)
            #expect(response.headers["X-Final"] == "yes")
            #expect(response.headers["Link"] == nil, "the interim head's fields are not the answer's")
            #expect(try await response.body.collect(upTo: 100) == Array("ok".utf8))
        case .urlSession:
            // FoundationNetworking reports the first head it reads: refused, not passed off as the answer.
            let error = await #expect(throws: AgentRuntimeError.self) { _ = try await get(server, kind) }
            #expect(error?.code == .transportFailure)
            #expect(error?.interruption?.transportCode == 100)
        }
    }

    @Test(arguments: HTTPClientKind.allCases)
    func aTricklingHeadStillHitsTheFirstByteTimeoutOnTime(kind: HTTPClientKind) async throws {
        // Slowloris: the head arrives a byte at a time and never completes. Bytes keep coming while the
        // injected clock passes 200 ms and then 101 ms more: the first-byte deadline (300 ms) is not moved
        // by them, and the head never ends, so the deadline is the only way out.
        let first = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n".utf8)
        let second = Array("X-Slow: yes\r\n".utf8)
        let trickle = { (bytes: [UInt8]) in bytes.flatMap { [ScriptedReply.Part.bytes([$0]), .delay(.milliseconds(2))] } }
        let parts = trickle(first) + [.hold] + trickle(second) + [.hold, .bytes(Array("\r\nok".utf8))]
        let server = try server(ScriptedReply(parts: parts, framing: .raw))
        defer { server.shutdown() }
        let clock = ManualClock()
        let http = kind.make(clock: clock)
        let exchange = Task { () -> AgentRuntimeError? in
            do {
                _ = try await http.send(HTTPRequest(method: "GET", url: server.baseURL, timeouts: .init(firstByte: .milliseconds(300))))
                return nil
            } catch let error as AgentRuntimeError {
                return error
            }
        }
        #expect(await server.waitForRequests(count: 1, timeout: .hangGuard))
        await clock.waitForSleepers(count: 1)
        #expect(await server.waitForSenderToStall(limit: first.count) == first.count)
        clock.advance(by: .milliseconds(200))
        server.releaseHeld()
        #expect(await server.waitForSenderToStall(limit: first.count + second.count) == first.count + second.count)
        clock.advance(by: .milliseconds(101))
        // A client whose deadline moved would wait forever: the suite's time limit cancels it.
        let error = try await withTaskCancellationHandler { try await exchange.value } onCancel: { exchange.cancel() }
        #expect(error?.message == "the first byte timeout of 0.3 seconds passed")
    }

    // MARK: - Bodies

    @Test(arguments: HTTPClientKind.allCases, ["gzip", "deflate"])
    func aCompressionBombIsNeverInflatedWithoutBound(kind: HTTPClientKind, coding: String) async throws {
        let inflated = 256 * 1024 * 1024
        let bomb = coding == "gzip" ? DeflateBomb.gzip(inflatedSize: inflated) : DeflateBomb.zlib(inflatedSize: inflated)
        let server = try server(ScriptedReply(headers: [.init(name: "Content-Encoding", value: coding)], parts: [.bytes(bomb)]))
        defer { server.shutdown() }
        let response = try await get(server, kind)
        switch kind {
        case .curl:
            // Offered and decoded: the reader's limit counts decoded bytes and stops the bomb.
            let error = await #expect(throws: AgentRuntimeError.self) { _ = try await response.body.collect(upTo: 8 * 1024 * 1024) }
            #expect(error?.code == .responseTooLarge)
            #expect(server.requests.first?.header("Accept-Encoding") == "deflate, gzip, br, zstd")
        case .urlSession:
            // FoundationNetworking inflates; a bounded reader stops it at its limit.
            let error = await #expect(throws: AgentRuntimeError.self) { _ = try await response.body.collect(upTo: 8 * 1024 * 1024) }
            #expect(error?.code == .responseTooLarge)
        }
    }

    @Test func anEndlessFastStreamWithAPausedConsumerHoldsTheBufferNotTheSender() async throws {
        // Measured in a process of its own: this process's RSS also carries the suites running beside it.
        let outcome = try await ChildProcess.run(ChildProcess.product("TransportFixture"), ["paused-endless", "--client", "curl"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let figures = try JSONDecoder().decode([String: Int].self, from: Data(outcome.stdout.utf8))
        let grown = (figures["paused"] ?? .max) - (figures["baseline"] ?? 0)
        #expect(grown <= 256 * 1024 + 16 * 1024 * 1024, "memory (\(Sanitizer.active)) grew \(grown) bytes while paused")
        // The sender is held back by TCP: what it got out is the buffers' worth, not an endless stream.
        #expect((figures["sent"] ?? .max) < 64 * 1024 * 1024)
        #expect(figures["closed"] == 1, "cancelling the paused body closed its connection")
    }

    @Test(arguments: HTTPClientKind.allCases)
    func aResetBeforeTheHeadOrInTheBodyIsATypedError(kind: HTTPClientKind) async throws {
        let before = try server(ScriptedReply(parts: [.closeAbruptly], framing: .raw))
        defer { before.shutdown() }
        let early = await #expect(throws: AgentRuntimeError.self) { _ = try await get(before, kind) }
        #expect(early?.code == .transportFailure)

        let during = try server(ScriptedReply(parts: [.bytes(Array("abc".utf8)), .closeAbruptly], framing: .chunked))
        defer { during.shutdown() }
        let response = try await get(during, kind)
        let late = await #expect(throws: AgentRuntimeError.self) { _ = try await response.body.collect(upTo: 1024) }
        #expect(late?.code == .transportFailure)
    }

    /// A kept-alive connection the server resets before replying to a request with a body: a typed
    /// error at once (the Responses client retries it), never a wait for the first-byte timeout
    /// (FoundationNetworking cannot rewind the body to resend it; found by the runtime soak).
    @Test(arguments: HTTPClientKind.allCases)
    func aResetBeforeTheReplyOnAKeptAliveConnectionFailsAtOnce(kind: HTTPClientKind) async throws {
        let server = try LoopbackHTTPServer(replies: [.text("first"), ScriptedReply(parts: [.closeAbruptly], framing: .raw), .text("third")])
        defer { server.shutdown() }
        let client = kind.make()
        let request = HTTPRequest(
            method: "POST", url: server.baseURL.appendingPathComponent("x"), body: Array("{}".utf8), timeouts: HTTPTimeouts(firstByte: .seconds(60))
        )
        #expect(try await client.send(request).body.collect(upTo: 100) == Array("first".utf8))
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await client.send(request) }
        #expect(error?.code == .transportFailure)
        #expect(server.requestCount == 2)
        // The client goes on. Connections: the reset one, the one opened for the resend that was given up
        // (it carries no request), and a new one for the next request.
        #expect(try await client.send(request).body.collect(upTo: 100) == Array("third".utf8))
        #expect(server.requestCount == 3)
        #expect(server.acceptedConnectionCount == 3)
    }

    @Test(arguments: HTTPClientKind.allCases)
    func aHalfCloseBeforeTheDeclaredLengthIsATypedError(kind: HTTPClientKind) async throws {
        let server = try server(raw("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b", then: [.halfClose]))
        defer { server.shutdown() }
        let response = try await get(server, kind)
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await response.body.collect(upTo: 1024) }
        #expect(error?.code == .transportFailure)
    }

    @Test(arguments: HTTPClientKind.allCases)
    func redirectsAreReturnedNeverFollowed(kind: HTTPClientKind) async throws {
        let elsewhere = try server(.text("you should not be here"))
        defer { elsewhere.shutdown() }
        for location in ["http://127.0.0.1:\(elsewhere.port)/stolen", "file:///etc/passwd"] {
            let server = try server(ScriptedReply(status: 302, headers: [.init(name: "Location", value: location)], parts: [.bytes(Array("moved".utf8))]))
            defer { server.shutdown() }
            let response = try await get(server, kind)
            #expect(response.statusCode == 302)
            #expect(response.headers["Location"] == location)
            #expect(try await response.body.collect(upTo: 100) == Array("moved".utf8))
        }
        #expect(elsewhere.requests.isEmpty)
    }

    // MARK: - Many exchanges

    @Test(arguments: HTTPClientKind.allCases)
    func twentyConcurrentStalledExchangesCancelledCloseEveryConnection(kind: HTTPClientKind) async throws {
        let server = try server(ScriptedReply(parts: [.bytes(Array("first".utf8)), .hold], framing: .chunked))
        defer { server.shutdown() }
        let http = kind.make()
        let started = AsyncStream<Void>.makeStream()
        var tasks: [Task<Void, any Error>] = []
        for _ in 0..<20 {
            tasks.append(Task {
                let response = try await http.send(HTTPRequest(method: "GET", url: server.baseURL))
                for try await _ in response.body { started.continuation.yield() }
            })
        }
        var seen = started.stream.makeAsyncIterator()
        for _ in 0..<20 { _ = await seen.next() }
        for task in tasks { task.cancel() }
        for task in tasks { _ = await task.result }
        #expect(await server.waitForClosedConnections(count: 20, timeout: .hangGuard))
        #expect(server.openConnectionCount == 0)
    }

    @Test(arguments: HTTPClientKind.allCases)
    func fastTransfersCancelledAfterTheirFirstChunkReleaseTheirDescriptors(kind: HTTPClientKind) async throws {
        // 200 for libcurl; 24 for URLSession, whose reading of an endless fast stream cannot be paused
        // (each cancelled transfer drains what FoundationNetworking queued: about 0.3 s and tens of MB).
        let turns = kind == .curl ? "200" : "24"
        let outcome = try await ChildProcess.runSurvivingFoundationNetworkingCrash(
            ChildProcess.product("TransportFixture"), ["cancelled-fast", "--client", kind == .curl ? "curl" : "urlsession", "--turns", turns],
            attempts: kind == .urlSession ? 3 : 1  // the platform crash is FoundationNetworking's alone
        )
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let figures = try JSONDecoder().decode([String: Int].self, from: Data(outcome.stdout.utf8))
        #expect((figures["descriptorsAtEnd"] ?? .max) <= (figures["descriptorsAt20"] ?? 0), "descriptors flat: \(figures)")
        #expect(figures["unlinkedFiles"] == 0)
        #expect(figures["closed"] == 1, "the server saw every connection closed")
    }

    @Test(arguments: HTTPClientKind.allCases)
    func fiveHundredExchangesAlternatingGoodRepliesAndResetsLeaveNothingBehind(kind: HTTPClientKind) async throws {
        let outcome = try await ChildProcess.runSurvivingFoundationNetworkingCrash(
            ChildProcess.product("TransportFixture"), ["alternating", "--client", kind == .curl ? "curl" : "urlsession", "--turns", "500"],
            attempts: kind == .urlSession ? 3 : 1  // the platform crash is FoundationNetworking's alone
        )
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let figures = try JSONDecoder().decode([String: Int].self, from: Data(outcome.stdout.utf8))
        #expect(figures["failures"] == 250, "every reset is a typed failure, every good reply arrives")
        // FoundationNetworking closes the socket of a connection the server reset lazily: one may still be
        // open at either measurement.
        let slack = kind == .curl ? 0 : 1
        #expect((figures["descriptorsAtEnd"] ?? .max) <= (figures["descriptorsAt50"] ?? 0) + slack, "descriptors flat: \(figures)")
        #expect(figures["unlinkedFiles"] == 0, "no temporary file left open")
        // Resident memory in an ordinary build; the sanitizer allocator's live bytes in a sanitized one.
        let grown = (figures["memoryAtEnd"] ?? .max) - (figures["memoryAt50"] ?? 0)
        #expect(grown <= 4 * 1024 * 1024, "memory (\(Sanitizer.active)) grew \(grown) bytes over 450 exchanges")
    }
}
