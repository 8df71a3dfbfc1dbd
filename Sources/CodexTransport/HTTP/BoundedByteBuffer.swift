import Foundation
import Synchronization

/// A bounded, lossless hand-off of byte chunks from a producer thread (the URLSession delegate queue)
/// to one async consumer.
///
/// When the buffered bytes would pass the limit, ``append(_:)`` blocks the producer's thread until the
/// consumer catches up; FoundationNetworking then stops reading the socket, so a slow consumer does not
/// make memory grow. A chunk is always accepted into an empty buffer, so the peak is at most
/// `max(limit, largest chunk)`.
public final class BoundedByteBuffer: HTTPBodySource {
    private struct State {
        var chunks: [[UInt8]] = []
        var head = 0
        var bufferedBytes = 0
        var peakBufferedBytes = 0
        var finished = false
        var failure: (any Error)?
        var cancelled = false
        var consumer: CheckedContinuation<[UInt8]?, any Error>?
        var producerWaiting = false
    }

    /// The most bytes held before the producer is made to wait.
    public let limit: Int
    private let state = Mutex(State())
    private let producerGate = DispatchSemaphore(value: 0)
    private let onCancel: @Sendable () -> Void

    /// Creates a buffer.
    ///
    /// - Parameters:
    ///   - limit: The most bytes held before the producer waits (at least 1).
    ///   - onCancel: Called once when the consumer cancels (for example to cancel the network task).
    public init(limit: Int, onCancel: @escaping @Sendable () -> Void = {}) {
        self.limit = max(1, limit)
        self.onCancel = onCancel
    }

    /// The highest number of bytes held at once so far.
    public var peakBufferedBytes: Int { state.withLock { $0.peakBufferedBytes } }

    /// The bytes held now.
    public var bufferedBytes: Int { state.withLock { $0.bufferedBytes } }

    /// Whether the producer is waiting for the consumer to make room.
    public var isProducerWaiting: Bool { state.withLock { $0.producerWaiting } }

    /// Adds a chunk, blocking the calling thread while the buffer is full. Returns `false` when the
    /// consumer has cancelled (the chunk is dropped). Never call from an async context.
    @discardableResult
    public func append(_ chunk: [UInt8]) -> Bool {
        guard !chunk.isEmpty else { return true }
        while true {
            enum Step { case delivered(CheckedContinuation<[UInt8]?, any Error>), stored, wait, cancelled }
            let step = state.withLock { state -> Step in
                if state.cancelled || state.finished { return .cancelled }
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
                state.producerWaiting = true
                return .wait
            }
            switch step {
            case .delivered(let consumer):
                consumer.resume(returning: chunk)
                return true
            case .stored:
                return true
            case .cancelled:
                return false
            case .wait:
                producerGate.wait()
            }
        }
    }

    /// Ends the stream, with an error or normally. Later ``append(_:)`` calls are ignored.
    public func finish(throwing error: (any Error)? = nil) {
        let consumer = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
            guard !state.finished else { return nil }
            state.finished = true
            state.failure = error
            wakeProducer(&state)
            defer { state.consumer = nil }
            return state.chunks.count > state.head ? nil : state.consumer
        }
        guard let consumer else { return }
        if let error { consumer.resume(throwing: error) } else { consumer.resume(returning: nil) }
    }

    /// The next chunk, waiting for the producer; `nil` at the end.
    public func next() async throws -> [UInt8]? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
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
                    wakeProducer(&state)
                    return .chunk(chunk)
                }
                if state.finished {
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

    /// Cancels: wakes the producer, drops buffered chunks, fails a waiting consumer with
    /// `CancellationError`, and calls `onCancel` once.
    public func cancel() {
        let (consumer, first) = state.withLock { state -> (CheckedContinuation<[UInt8]?, any Error>?, Bool) in
            let first = !state.cancelled && !state.finished
            state.cancelled = true
            state.chunks.removeAll()
            state.head = 0
            state.bufferedBytes = 0
            wakeProducer(&state)
            defer { state.consumer = nil }
            return (state.consumer, first)
        }
        consumer?.resume(throwing: CancellationError())
        if first { onCancel() }
    }

    private func wakeProducer(_ state: inout State) {
        if state.producerWaiting {
            state.producerWaiting = false
            producerGate.signal()
        }
    }
}
