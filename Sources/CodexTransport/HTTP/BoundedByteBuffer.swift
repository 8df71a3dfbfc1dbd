import CodexCore
import Foundation
import Synchronization

/// A lossless hand-off of byte chunks from a producer thread (the URLSession delegate queue) to one
/// async consumer, with bounded memory.
///
/// FoundationNetworking offers no way to stop reading a response (it queues every delivery for its
/// delegate queue, and suspending a task restarts the transfer), so a producer that waited for a slow
/// consumer would only move the backlog into URLSession's queue, out of sight and without a bound.
/// Instead ``append(_:)`` never blocks: up to ``limit`` bytes are held in memory, and while the consumer
/// lags further behind, later chunks go to an unlinked temporary file (mode 0600) and are read back in
/// order. Past ``spillLimit`` bytes on disk the stream fails with `response_too_large`; a file that
/// cannot be written fails it with `storage_failure`. Either failure cancels the transfer (through
/// `onCancel`) and arrives after the chunks already held.
///
/// Memory held is at most `max(limit, largest chunk)`, and 64 KiB per read from the file.
public final class BoundedByteBuffer: HTTPBodySource {
    private struct State {
        var chunks: [[UInt8]] = []
        var head = 0
        var bufferedBytes = 0
        var peakBufferedBytes = 0
        var spill: SpillFile?
        var peakSpilledBytes = 0
        var finished = false
        var failure: (any Error)?
        var cancelled = false
        var consumer: CheckedContinuation<[UInt8]?, any Error>?

        var spilledBytes: Int { spill?.pendingBytes ?? 0 }
    }

    /// The default limit on bytes held on disk for one stream: 256 MiB.
    public static let defaultSpillLimit = 256 * 1024 * 1024

    /// The most bytes held in memory; beyond it chunks go to disk.
    public let limit: Int
    /// The most bytes held on disk before the stream fails with `response_too_large`.
    public let spillLimit: Int
    private let spillDirectory: String
    private let state = Mutex(State())
    private let onCancel: @Sendable () -> Void
    private static let readSize = 64 * 1024

    /// Creates a buffer.
    ///
    /// - Parameters:
    ///   - limit: The most bytes held in memory (at least 1).
    ///   - spillLimit: The most bytes held on disk (0 disables spilling: the stream fails once the
    ///     memory limit is passed). Default 256 MiB.
    ///   - spillDirectory: Where the spill file is created. Default: the temporary directory (`TMPDIR`).
    ///   - onCancel: Called once when the consumer cancels or the buffer fails (to cancel the transfer).
    public init(
        limit: Int, spillLimit: Int = BoundedByteBuffer.defaultSpillLimit, spillDirectory: String? = nil,
        onCancel: @escaping @Sendable () -> Void = {}
    ) {
        self.limit = max(1, limit)
        self.spillLimit = max(0, spillLimit)
        self.spillDirectory = spillDirectory ?? FileManager.default.temporaryDirectory.path
        self.onCancel = onCancel
    }

    /// The highest number of bytes held in memory at once so far.
    public var peakBufferedBytes: Int { state.withLock { $0.peakBufferedBytes } }

    /// The bytes held in memory now.
    public var bufferedBytes: Int { state.withLock { $0.bufferedBytes } }

    /// The bytes held on disk now.
    public var spilledBytes: Int { state.withLock { $0.spilledBytes } }

    /// The highest number of bytes held on disk at once so far.
    public var peakSpilledBytes: Int { state.withLock { $0.peakSpilledBytes } }

    /// The spill file's size on disk now (0 without one): never more than ``spillLimit``.
    public var spillFileSize: Int { state.withLock { $0.spill?.fileSize ?? 0 } }

    /// Adds a chunk without blocking. Returns `false` when the chunk was not taken: the consumer
    /// cancelled, the stream already ended, or it failed just now (see the type's description).
    @discardableResult
    public func append(_ chunk: [UInt8]) -> Bool {
        guard !chunk.isEmpty else { return true }
        enum Step { case delivered(CheckedContinuation<[UInt8]?, any Error>), stored, rejected, failed }
        let step = state.withLock { state -> Step in
            if state.cancelled || state.finished { return .rejected }
            if state.spilledBytes == 0 {
                if let consumer = state.consumer, state.bufferedBytes == 0 {
                    state.consumer = nil
                    state.peakBufferedBytes = max(state.peakBufferedBytes, chunk.count)
                    return .delivered(consumer)
                }
                if state.bufferedBytes == 0 || state.bufferedBytes + chunk.count <= limit {
                    state.chunks.append(chunk)
                    state.bufferedBytes += chunk.count
                    state.peakBufferedBytes = max(state.peakBufferedBytes, state.bufferedBytes)
                    return .stored
                }
            }
            do throws(AgentRuntimeError) {
                try spill(chunk, &state)
                return .stored
            } catch {
                state.finished = true
                state.failure = error
                return .failed
            }
        }
        switch step {
        case .delivered(let consumer):
            consumer.resume(returning: chunk)
            return true
        case .stored:
            return true
        case .rejected:
            return false
        case .failed:
            onCancel()
            return false
        }
    }

    /// Writes a chunk to the spill file (created on first use). Called under the lock.
    private func spill(_ chunk: [UInt8], _ state: inout State) throws(AgentRuntimeError) {
        guard state.spilledBytes + chunk.count <= spillLimit else {
            throw AgentRuntimeError(.bodyAheadOfReader(limit: limit + spillLimit))
        }
        let file: SpillFile
        if let existing = state.spill {
            file = existing
        } else {
            file = try SpillFile(directory: spillDirectory, capacity: spillLimit)
            state.spill = file
        }
        try file.write(chunk)
        state.peakSpilledBytes = max(state.peakSpilledBytes, file.pendingBytes)
    }

    /// Ends the stream, with an error or normally. Later ``append(_:)`` calls are ignored.
    ///
    /// - Parameters:
    ///   - error: The failure, or `nil` for the normal end.
    ///   - discardingHeld: Drops the bytes still held (in memory and on disk) so the error is the next
    ///     thing the consumer gets — for a deadline that has passed.
    public func finish(throwing error: (any Error)? = nil, discardingHeld: Bool = false) {
        let consumer = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
            guard !state.finished else { return nil }
            state.finished = true
            state.failure = error
            if discardingHeld {
                state.chunks.removeAll()
                state.head = 0
                state.bufferedBytes = 0
                state.spill = nil
            }
            defer { state.consumer = nil }
            return state.chunks.count > state.head || state.spilledBytes > 0 ? nil : state.consumer
        }
        guard let consumer else { return }
        if let error { consumer.resume(throwing: error) } else { consumer.resume(returning: nil) }
    }

    /// The next chunk, waiting for the producer; `nil` at the end.
    public func next() async throws -> [UInt8]? {
        var failedNow = false
        defer { if failedNow { onCancel() } }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
            enum Step { case chunk([UInt8]), end, failed(any Error), wait }
            let step = state.withLock { state -> Step in
                if state.cancelled { return .failed(CancellationError()) }
                if state.head < state.chunks.count {
                    let chunk = state.chunks[state.head]
                    state.head += 1
                    state.bufferedBytes -= chunk.count
                    if state.head == state.chunks.count {
                        state.chunks.removeAll(keepingCapacity: true)
                        state.head = 0
                    } else if state.head > 64, state.head * 2 > state.chunks.count {
                        state.chunks.removeFirst(state.head)
                        state.head = 0
                    }
                    return .chunk(chunk)
                }
                if let file = state.spill, file.pendingBytes > 0 {
                    do throws(AgentRuntimeError) {
                        return .chunk(try file.read(maximum: Self.readSize))
                    } catch {
                        // The rest of the body is unreadable: fail here and stop the transfer.
                        let wasFinished = state.finished
                        state.finished = true
                        state.spill = nil
                        state.failure = error
                        failedNow = !wasFinished
                        return .failed(error)
                    }
                }
                if state.finished {
                    state.spill = nil
                    if let failure = state.failure { return .failed(failure) }
                    return .end
                }
                state.consumer = continuation
                return .wait
            }
            switch step {
            case .chunk(let chunk): continuation.resume(returning: chunk)
            case .end: continuation.resume(returning: nil)
            case .failed(let error): continuation.resume(throwing: error)
            case .wait: break
            }
        }
    }

    /// Cancels: drops buffered chunks and the spill file, fails a waiting consumer with
    /// `CancellationError`, and calls `onCancel` once.
    public func cancel() {
        let (consumer, first) = state.withLock { state -> (CheckedContinuation<[UInt8]?, any Error>?, Bool) in
            let first = !state.cancelled && !state.finished
            state.cancelled = true
            state.chunks.removeAll()
            state.head = 0
            state.bufferedBytes = 0
            state.spill = nil
            defer { state.consumer = nil }
            return (state.consumer, first)
        }
        consumer?.resume(throwing: CancellationError())
        if first { onCancel() }
    }
}
