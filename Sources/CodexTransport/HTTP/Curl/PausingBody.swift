import CodexCore
import Synchronization

/// The body hand-off of a libcurl transfer as a pure state machine: chunks the transfer offers are held
/// up to `limit` bytes; past it the transfer is told to pause (libcurl keeps the chunk and offers it
/// again once resumed), so the sender is slowed down by TCP instead of filling memory. The consumer's
/// reads drain the buffer and ask for a resume once it is at most half full.
///
/// Bytes held never exceed `max(limit, largest chunk)`.
struct PausingBodyState {
    /// What the transfer's write callback should do with a chunk.
    enum OfferAction {
        /// Give the chunk to the waiting consumer (the buffer was empty).
        case deliver(CheckedContinuation<[UInt8]?, any Error>, [UInt8])
        /// The chunk is held.
        case stored
        /// The buffer is full: pause the transfer (the chunk stays with libcurl).
        case pause
        /// The body was cancelled or already ended: abort the transfer.
        case reject
    }

    /// What a consumer's read gets.
    enum TakeAction {
        /// A chunk; `resume` when the transfer should be resumed now.
        case chunk([UInt8], resume: Bool)
        /// Nothing held yet: the consumer waits (`resume` when the transfer was paused and must go on).
        case wait(resume: Bool)
        /// The end of the body.
        case end
        /// The body failed (or was cancelled).
        case fail(any Error)
    }

    let limit: Int
    private var chunks: [[UInt8]] = []
    private var head = 0
    private(set) var bufferedBytes = 0
    private(set) var peakBufferedBytes = 0
    private(set) var paused = false
    private(set) var cancelled = false
    private var ending: Result<Void, any Error>?
    private var waiter: CheckedContinuation<[UInt8]?, any Error>?

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// A chunk from the transfer.
    mutating func offer(_ chunk: [UInt8]) -> OfferAction {
        guard !cancelled, ending == nil else { return .reject }
        if let waiter, bufferedBytes == 0 {
            self.waiter = nil
            peakBufferedBytes = max(peakBufferedBytes, chunk.count)
            return .deliver(waiter, chunk)
        }
        if bufferedBytes > 0, bufferedBytes + chunk.count > limit {
            paused = true
            return .pause
        }
        chunks.append(chunk)
        bufferedBytes += chunk.count
        peakBufferedBytes = max(peakBufferedBytes, bufferedBytes)
        return .stored
    }

    /// A consumer's read; `waiter` is kept when it has to wait.
    mutating func take(_ continuation: CheckedContinuation<[UInt8]?, any Error>) -> TakeAction {
        if cancelled { return .fail(CancellationError()) }
        if head < chunks.count {
            let chunk = chunks[head]
            head += 1
            bufferedBytes -= chunk.count
            if head == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 64, head * 2 > chunks.count {
                chunks.removeFirst(head)
                head = 0
            }
            let resume = paused && bufferedBytes <= limit / 2
            if resume { paused = false }
            return .chunk(chunk, resume: resume)
        }
        switch ending {
        case .success?: return .end
        case .failure(let error)?: return .fail(error)
        case nil: break
        }
        waiter = continuation
        let resume = paused
        paused = false
        return .wait(resume: resume)
    }

    /// The transfer ended (with `error`, or normally). A timeout passes `discardingHeld`: its error is
    /// due now, not after the bytes still held.
    /// - Returns: The waiting consumer to resume, if any.
    mutating func finish(_ error: (any Error)?, discardingHeld: Bool) -> CheckedContinuation<[UInt8]?, any Error>? {
        guard ending == nil, !cancelled else { return nil }
        ending = error.map { .failure($0) } ?? .success(())
        if discardingHeld {
            chunks.removeAll()
            head = 0
            bufferedBytes = 0
        }
        guard head >= chunks.count else { return nil }
        defer { waiter = nil }
        return waiter
    }

    /// The consumer cancelled: everything held is dropped.
    /// - Returns: The waiting consumer, and whether the transfer must be stopped (it had not ended).
    mutating func cancel() -> (waiter: CheckedContinuation<[UInt8]?, any Error>?, stopTransfer: Bool) {
        guard !cancelled else { return (nil, false) }
        cancelled = true
        chunks.removeAll()
        head = 0
        bufferedBytes = 0
        defer { waiter = nil }
        return (waiter, ending == nil)
    }
}

/// The ``HTTPBodySource`` of a libcurl transfer: a Mutex around ``PausingBodyState``, with the
/// continuations resumed outside the lock and the transfer told to resume or stop through callbacks.
final class PausingBody: HTTPBodySource {
    private let state: Mutex<PausingBodyState>
    private let onResume: @Sendable () -> Void
    private let onCancel: @Sendable () -> Void

    init(limit: Int, onResume: @escaping @Sendable () -> Void, onCancel: @escaping @Sendable () -> Void) {
        state = Mutex(PausingBodyState(limit: limit))
        self.onResume = onResume
        self.onCancel = onCancel
    }

    /// The most bytes held at once so far.
    var peakBufferedBytes: Int { state.withLock { $0.peakBufferedBytes } }

    /// The bytes held now.
    var bufferedBytes: Int { state.withLock { $0.bufferedBytes } }

    /// Offers a chunk (from the transfer's thread); see ``PausingBodyState/offer(_:)``.
    func offer(_ chunk: [UInt8]) -> PausingBodyState.OfferAction {
        let action = state.withLock { $0.offer(chunk) }
        if case .deliver(let waiter, let chunk) = action { waiter.resume(returning: chunk) }
        return action
    }

    /// Ends the body.
    func finish(_ error: (any Error)?, discardingHeld: Bool = false) {
        let waiter = state.withLock { $0.finish(error, discardingHeld: discardingHeld) }
        guard let waiter else { return }
        if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
    }

    /// The next chunk, waiting for the transfer; `nil` at the end.
    func next() async throws -> [UInt8]? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
            let action = state.withLock { $0.take(continuation) }
            switch action {
            case .chunk(let chunk, let resume):
                if resume { onResume() }
                continuation.resume(returning: chunk)
            case .wait(let resume):
                if resume { onResume() }
            case .end:
                continuation.resume(returning: nil)
            case .fail(let error):
                continuation.resume(throwing: error)
            }
        }
    }

    /// Cancels: drops what is held, fails a waiting read, stops the transfer.
    func cancel() {
        let (waiter, stop) = state.withLock { $0.cancel() }
        waiter?.resume(throwing: CancellationError())
        if stop { onCancel() }
    }
}
