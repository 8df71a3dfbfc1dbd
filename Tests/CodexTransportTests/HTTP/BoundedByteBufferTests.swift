import CodexCore
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization
import Testing

/// The buffer on its own: memory limit, spill order, spill limit, failures and cancellation.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct BoundedByteBufferTests {
    /// Chunk `i` has `1 + (i * 37) % 300` bytes, each `(i + offset) % 256`: sizes vary, order is visible.
    static func chunk(_ index: Int) -> [UInt8] {
        (0..<(1 + (index * 37) % 300)).map { UInt8((index + $0) % 256) }
    }

    static func drain(_ buffer: BoundedByteBuffer) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        while let chunk = try await buffer.next() { bytes += chunk }
        return bytes
    }

    @Test func theSpillFileNeverGrowsPastTheSpillLimitWhileTheReaderStaysBehind() async throws {
        // The reader stays 128 KiB behind, so the spill never drains to empty: a file truncated only when
        // it empties would grow by every byte written (64 MiB here) instead of staying within the limit.
        let spillLimit = 256 * 1024
        let buffer = BoundedByteBuffer(limit: 16 * 1024, spillLimit: spillLimit)
        let piece = [UInt8](repeating: 7, count: 16 * 1024)
        for _ in 0..<9 { #expect(buffer.append(piece)) }
        var written = 9 * piece.count
        var received = 0
        var largestFile = 0
        var fewestPending = Int.max
        for _ in 0..<1_024 {
            received += try #require(try await buffer.next()).count
            while written - received < 9 * piece.count {
                #expect(buffer.append(piece))
                written += piece.count
            }
            fewestPending = min(fewestPending, buffer.spilledBytes)
            largestFile = max(largestFile, buffer.spillFileSize)
        }
        #expect(fewestPending > 0, "the spill never emptied")
        #expect(written > 16 * 1024 * 1024)
        #expect(largestFile <= spillLimit)
        buffer.finish()
        received += try await Self.drain(buffer).count
        #expect(received == written)
    }

    @Test func bytesPastTheLimitGoToDiskAndComeBackInOrder() async throws {
        let buffer = BoundedByteBuffer(limit: 1_000)
        var expected: [UInt8] = []
        for index in 0..<2_000 {
            #expect(buffer.append(Self.chunk(index)))
            expected += Self.chunk(index)
        }
        #expect(buffer.bufferedBytes <= 1_000)
        #expect(buffer.bufferedBytes + buffer.spilledBytes == expected.count)
        // Read part, append more while the spill drains, then read the rest.
        var received: [UInt8] = []
        for _ in 0..<10 { received += try #require(try await buffer.next()) }
        #expect(buffer.spilledBytes > 0)
        for index in 2_000..<2_060 {
            #expect(buffer.append(Self.chunk(index)))
            expected += Self.chunk(index)
        }
        buffer.finish()
        received += try await Self.drain(buffer)
        #expect(received == expected)
        #expect(buffer.spilledBytes == 0)
        #expect(buffer.peakBufferedBytes <= 1_000)
        #expect(buffer.peakSpilledBytes > 250_000)
    }

    @Test func aChunkLargerThanTheLimitIsHeldWhenTheBufferIsEmpty() async throws {
        let buffer = BoundedByteBuffer(limit: 10, spillLimit: 0)
        #expect(buffer.append([UInt8](repeating: 7, count: 50)))
        #expect(buffer.bufferedBytes == 50)
        #expect(buffer.spilledBytes == 0)
        buffer.finish()
        #expect(try await Self.drain(buffer) == [UInt8](repeating: 7, count: 50))
    }

    @Test func passingTheSpillLimitFailsAfterTheHeldBytesAndCancelsOnce() async throws {
        let cancellations = Mutex(0)
        let buffer = BoundedByteBuffer(limit: 100, spillLimit: 250, onCancel: { cancellations.withLock { $0 += 1 } })
        #expect(buffer.append([UInt8](repeating: 1, count: 100)))
        #expect(buffer.append([UInt8](repeating: 2, count: 200)))
        #expect(!buffer.append([UInt8](repeating: 3, count: 100)))
        #expect(!buffer.append([UInt8](repeating: 4, count: 1)))
        #expect(cancellations.withLock { $0 } == 1)
        #expect(try await buffer.next() == [UInt8](repeating: 1, count: 100))
        #expect(try await buffer.next() == [UInt8](repeating: 2, count: 200))
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await buffer.next() }
        #expect(error?.code == .responseTooLarge)
        buffer.cancel()
        #expect(cancellations.withLock { $0 } == 1)
    }

    @Test func aMissingSpillDirectoryIsAStorageFailure() async throws {
        let buffer = BoundedByteBuffer(limit: 4, spillDirectory: "/nonexistent/codexkit-\(UInt64.random(in: 0...UInt64.max))")
        #expect(buffer.append([1, 2, 3, 4]))
        #expect(!buffer.append([5]))
        #expect(try await buffer.next() == [1, 2, 3, 4])
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await buffer.next() }
        #expect(error?.code == .storageFailure)
        #expect(error?.message.contains("nonexistent") == false)
    }

    @Test func theSpillFileLeavesNoNameBehindAndCancelDropsItsBytes() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-spill-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let buffer = BoundedByteBuffer(limit: 8, spillDirectory: directory.path)
        #expect(buffer.append([UInt8](repeating: 9, count: 8)))
        #expect(buffer.append([UInt8](repeating: 9, count: 4_096)))
        #expect(buffer.spilledBytes == 4_096)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [])
        buffer.cancel()
        #expect(buffer.spilledBytes == 0)
        #expect(buffer.bufferedBytes == 0)
        await #expect(throws: CancellationError.self) { _ = try await buffer.next() }
        #expect(!buffer.append([1]))
    }

    @Test func aWaitingConsumerIsResumedByTheNextChunkAndThenFailed() async throws {
        let buffer = BoundedByteBuffer(limit: 16)
        async let first = buffer.next()
        try await Task.sleep(for: .milliseconds(50))
        #expect(buffer.append([42]))
        #expect(try await first == [42])
        buffer.finish(throwing: AgentRuntimeError(code: .transportFailure, message: "reset"))
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await buffer.next() }
        #expect(error?.code == .transportFailure)
    }
}
