import CodexCore
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// How the real URLSession transport holds a body its reader has not consumed yet: in memory up to the
/// limit, then on disk, never in FoundationNetworking's queue, and nothing lost or reordered.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct BodyBufferingTests {
    static let partSize = 64 * 1024

    /// `count` parts of 64 KiB; part `i` is filled with `i % 251`, so order is checkable byte by byte.
    /// The 251 distinct parts.
    static let distinctParts = (0..<251).map { [UInt8](repeating: UInt8($0), count: partSize) }

    static func patternedParts(_ count: Int) -> [ScriptedReply.Part] {
        (0..<count).map { .bytes(distinctParts[$0 % 251]) }
    }

    /// Checks that `chunk`, starting at body offset `offset`, matches the pattern (one `memcmp` per part
    /// it overlaps, so debug builds stay quick).
    static func matchesPattern(_ chunk: [UInt8], at offset: Int) -> Bool {
        var index = 0
        while index < chunk.count {
            let position = offset + index
            let length = min(chunk.count - index, partSize - position % partSize)
            let same = chunk.withUnsafeBufferPointer { bytes in
                distinctParts[(position / partSize) % 251].withUnsafeBufferPointer { part in
                    memcmp(bytes.baseAddress! + index, part.baseAddress!, length) == 0
                }
            }
            if !same { return false }
            index += length
        }
        return true
    }

    /// Waits (at most `limit`) until `condition` holds.
    static func wait(upTo limit: Duration, until condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
    }

    @Test func aSlowConsumerKeepsBufferedBytesUnderTheLimit() async throws {
        let server = try LoopbackHTTPServer(replies: [.init(parts: Self.patternedParts(800), framing: .contentLength)])
        defer { server.shutdown() }
        let limit = 256 * 1024
        let observed = BufferBox()
        let http = URLSessionHTTPClient(configuration: .init(maximumBufferedBytes: limit, bufferObserver: { observed.set($0) }))
        let response = try await http.send(HTTPRequest(method: "GET", url: server.baseURL.appendingPathComponent("big")))
        var total = 0
        var chunks = 0
        var inOrder = true
        for try await chunk in response.body {
            inOrder = inOrder && Self.matchesPattern(chunk, at: total)
            total += chunk.count
            chunks += 1
            if chunks % 64 == 0 { try await Task.sleep(for: .milliseconds(20)) } // a slow reader
        }
        #expect(total == 50 * 1024 * 1024)
        #expect(inOrder)
        let buffer = try #require(observed.buffer)
        #expect(buffer.peakBufferedBytes <= limit)
        #expect(buffer.peakBufferedBytes > 0)
        #expect(buffer.spilledBytes == 0)
    }

    @Test func aStalledConsumerKeepsMemoryFlatAndLosesNothing() async throws {
        // FoundationNetworking cannot pause a transfer: it queues every delivery for the delegate. The body
        // must end up on disk, not in memory, while the reader stalls.
        let total = 24 * 1024 * 1024
        let server = try LoopbackHTTPServer(replies: [.init(parts: Self.patternedParts(384), framing: .contentLength)])
        defer { server.shutdown() }
        let limit = 256 * 1024
        let observed = BufferBox()
        let http = URLSessionHTTPClient(configuration: .init(maximumBufferedBytes: limit, bufferObserver: { observed.set($0) }))
        let response = try await http.send(HTTPRequest(method: "GET", url: server.baseURL.appendingPathComponent("big")))
        let buffer = try #require(observed.buffer)
        var iterator = response.body.makeAsyncIterator()
        let first = try #require(try await iterator.next())
        var received = first.count
        var inOrder = Self.matchesPattern(first, at: 0)
        // Stall until the whole body sits in the buffer: then nothing waits in URLSession's queue, and at
        // most `limit` bytes are in memory. (A transport that blocked its delegate never gets here.)
        try await Self.wait(upTo: .seconds(20)) { received + buffer.bufferedBytes + buffer.spilledBytes == total }
        #expect(server.sentBodyByteCount == total)
        #expect(buffer.bufferedBytes <= limit)
        #expect(buffer.spilledBytes >= total - limit - received)
        while let chunk = try await iterator.next() {
            inOrder = inOrder && Self.matchesPattern(chunk, at: received)
            received += chunk.count
        }
        #expect(received == total)
        #expect(inOrder)
        #expect(buffer.spilledBytes == 0)
        #expect(buffer.peakBufferedBytes <= limit)
        #expect(buffer.peakSpilledBytes >= total - limit - first.count)
    }

    @Test func aReaderTooFarBehindFailsWithResponseTooLargeAndClosesTheConnection() async throws {
        // The reply holds after 4 MiB, so only a cancelled transfer closes the connection.
        let server = try LoopbackHTTPServer(replies: [.init(parts: Self.patternedParts(64) + [.hold] + Self.patternedParts(1), framing: .contentLength)])
        defer { server.shutdown() }
        let observed = BufferBox()
        let http = URLSessionHTTPClient(configuration: .init(
            maximumBufferedBytes: 16 * 1024, maximumSpilledBytes: 1024 * 1024, bufferObserver: { observed.set($0) }
        ))
        let response = try await http.send(HTTPRequest(method: "GET", url: server.baseURL.appendingPathComponent("big")))
        let buffer = try #require(observed.buffer)
        var iterator = response.body.makeAsyncIterator()
        var received = try await iterator.next()?.count ?? 0
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
        var inOrder = true
        let error = await #expect(throws: AgentRuntimeError.self) {
            while let chunk = try await iterator.next() {
                inOrder = inOrder && Self.matchesPattern(chunk, at: received)
                received += chunk.count
            }
        }
        #expect(error?.code == .responseTooLarge)
        #expect(inOrder)
        #expect(received < 8 * 1024 * 1024)
        #expect(received >= 1024 * 1024)
        #expect(buffer.peakSpilledBytes <= 1024 * 1024)
        #expect(buffer.spilledBytes == 0)
    }

    @Test func anUnwritableSpillDirectoryFailsWithStorageFailureAfterTheHeldBytes() async throws {
        let server = try LoopbackHTTPServer(replies: [.init(parts: Self.patternedParts(64) + [.hold] + Self.patternedParts(1), framing: .contentLength)])
        defer { server.shutdown() }
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-missing-\(UInt64.random(in: 0...UInt64.max))").path
        let http = URLSessionHTTPClient(configuration: .init(maximumBufferedBytes: 16 * 1024, spillDirectory: missing))
        let response = try await http.send(HTTPRequest(method: "GET", url: server.baseURL.appendingPathComponent("big")))
        var iterator = response.body.makeAsyncIterator()
        var received = try await iterator.next()?.count ?? 0
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
        let error = await #expect(throws: AgentRuntimeError.self) {
            while let chunk = try await iterator.next() { received += chunk.count }
        }
        #expect(error?.code == .storageFailure)
        #expect(error?.message.contains(missing) == false)
        #expect(received < 4 * 1024 * 1024)
        #expect(!FileManager.default.fileExists(atPath: missing))
    }
}
