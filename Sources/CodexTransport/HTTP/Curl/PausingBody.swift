import CodexCore
import Synchronization

/// What a libcurl transfer's write callback should do with a chunk (see ``PausingBodyState``).
enum PausingBodyOffer: Equatable {
    /// The chunk is held; `release` when a consumer waits for it and the engine must hand it over
    /// (``PausingBody/release()``) once its pass ends (asked once per wait).
    case stored(release: Bool)
    /// The chunk is held and the waiting consumer gets its bytes now: half the buffer is full.
    case releaseNow
    /// The buffer is full: pause the transfer (the chunk stays with libcurl).
    case pause
    /// The body was cancelled or already ended: abort the transfer.
    case reject
}

/// What a consumer's read of a libcurl body gets (see ``PausingBodyState``).
enum PausingBodyTake {
    /// A chunk; `resume` when the transfer should be resumed now.
    case chunk([UInt8], resume: Bool)
    /// Nothing held yet: the consumer waits (`resume` when the transfer was paused and must go on).
    case wait(resume: Bool)
    /// The end of the body.
    case end
    /// The body failed (or was cancelled).
    case fail(any Error)
}

/// The body hand-off of a libcurl transfer as a pure state machine: chunks the transfer offers are held
/// up to `limit` bytes; past it the transfer is told to pause (libcurl keeps the chunk and offers it
/// again once resumed), so the sender is slowed down by TCP instead of filling memory. The consumer's
/// reads drain the buffer and ask for a resume once it is at most half full.
///
/// A consumer waiting for bytes is not woken by each chunk: the first chunk offered while it waits asks
/// for a release, which the engine does once its pass over the transfers ends (``release()``), or at
/// once when half the buffer is full. A pass reads what the socket has, so the consumer wakes once per
/// pass (or per half buffer) with the chunks waiting, not once per 16 KiB read, and a chunk waits no
/// longer than the rest of that pass.
///
/// `Waiter` is what a consumer waiting for bytes is resumed through (a continuation; a plain value in
/// tests). Bytes held never exceed `max(limit, largest chunk)`.
struct PausingBodyState<Waiter> {
    let limit: Int
    private var chunks: [[UInt8]] = []
    private var head = 0
    private(set) var bufferedBytes = 0
    private(set) var peakBufferedBytes = 0
    private(set) var paused = false
    private(set) var cancelled = false
    private var ending: Result<Void, any Error>?
    private var waiter: Waiter?
    /// Whether a release was asked for the current waiter.
    private var releaseAsked = false

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// A chunk from the transfer.
    mutating func offer(_ chunk: [UInt8]) -> PausingBodyOffer {
        guard !cancelled, ending == nil else { return .reject }
        if bufferedBytes > 0, bufferedBytes + chunk.count > limit {
            paused = true
            return .pause
        }
        chunks.append(chunk)
        bufferedBytes += chunk.count
        peakBufferedBytes = max(peakBufferedBytes, bufferedBytes)
        guard waiter != nil else { return .stored(release: false) }
        if bufferedBytes * 2 >= limit { return .releaseNow }
        guard !releaseAsked else { return .stored(release: false) }
        releaseAsked = true
        return .stored(release: true)
    }

    /// After the engine's pass: the waiting consumer and the chunk it gets (or `nil` when no consumer
    /// waits or nothing is held).
    mutating func release() -> (Waiter, PausingBodyTake)? {
        guard let waiter, head < chunks.count else { return nil }
        self.waiter = nil
        releaseAsked = false
        return (waiter, nextChunk())
    }

    /// A consumer's read; `waiter` is kept when it has to wait.
    mutating func take(_ continuation: Waiter) -> PausingBodyTake {
        if cancelled { return .fail(CancellationError()) }
        if head < chunks.count { return nextChunk() }
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

    /// Removes the oldest held chunk (one must be held).
    private mutating func nextChunk() -> PausingBodyTake {
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

    /// The transfer ended (with `error`, or normally). A timeout passes `discardingHeld`: its error is
    /// due now, not after the bytes still held.
    /// - Returns: The waiting consumer to resume and what it gets, if one waits.
    mutating func finish(_ error: (any Error)?, discardingHeld: Bool) -> (Waiter, PausingBodyTake)? {
        guard ending == nil, !cancelled else { return nil }
        ending = error.map { .failure($0) } ?? .success(())
        if discardingHeld {
            chunks.removeAll()
            head = 0
            bufferedBytes = 0
        }
        guard let waiter else { return nil }
        self.waiter = nil
        releaseAsked = false
        if head < chunks.count { return (waiter, nextChunk()) }
        return (waiter, error.map { .fail($0) } ?? .end)
    }

    /// The consumer cancelled: everything held is dropped.
    /// - Returns: The waiting consumer, and whether the transfer must be stopped (it had not ended).
    mutating func cancel() -> (waiter: Waiter?, stopTransfer: Bool) {
        guard !cancelled else { return (nil, false) }
        cancelled = true
        chunks.removeAll()
        head = 0
        bufferedBytes = 0
        releaseAsked = false
        defer { waiter = nil }
        return (waiter, ending == nil)
    }
}

/// The ``HTTPBodySource`` of a libcurl transfer: a Mutex around ``PausingBodyState``, with the
/// continuations resumed outside the lock and the transfer told to resume or stop through callbacks.
final class PausingBody: HTTPBodySource {
    private typealias State = PausingBodyState<CheckedContinuation<[UInt8]?, any Error>>
    private let state: Mutex<State>
    private let onResume: @Sendable () -> Void
    private let onCancel: @Sendable () -> Void

    init(limit: Int, onResume: @escaping @Sendable () -> Void, onCancel: @escaping @Sendable () -> Void) {
        state = Mutex(State(limit: limit))
        self.onResume = onResume
        self.onCancel = onCancel
    }

    /// The most bytes held at once so far.
    var peakBufferedBytes: Int { state.withLock { $0.peakBufferedBytes } }

    /// The bytes held now.
    var bufferedBytes: Int { state.withLock { $0.bufferedBytes } }

    /// Offers a chunk (from the transfer's thread); see ``PausingBodyState/offer(_:)``.
    func offer(_ chunk: [UInt8]) -> PausingBodyOffer {
        state.withLock { $0.offer(chunk) }
    }

    /// Hands held bytes to a waiting consumer (from the transfer's thread: once its pass ends, or at
    /// once when half the buffer is full); see ``PausingBodyState/release()``.
    func release() {
        guard let (waiter, action) = state.withLock({ $0.release() }) else { return }
        resolve(waiter, with: action)
    }

    /// Ends the body.
    func finish(_ error: (any Error)?, discardingHeld: Bool = false) {
        guard let (waiter, action) = state.withLock({ $0.finish(error, discardingHeld: discardingHeld) }) else { return }
        resolve(waiter, with: action)
    }

    /// The next chunk, waiting for the transfer; `nil` at the end.
    func next() async throws -> [UInt8]? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
            resolve(continuation, with: state.withLock { $0.take(continuation) })
        }
    }

    /// Resumes a consumer with what its read gets, asking the transfer to go on first when it should.
    private func resolve(_ continuation: CheckedContinuation<[UInt8]?, any Error>, with action: PausingBodyTake) {
        switch action {
        case .chunk(let chunk, let resume):
            if resume { onResume() }
            continuation.resume(returning: chunk)
        case .wait(let resume):
            // A read that has to wait: its continuation is kept, resumed by a later release or end.
            if resume { onResume() }
        case .end:
            continuation.resume(returning: nil)
        case .fail(let error):
            continuation.resume(throwing: error)
        }
    }

    /// Cancels: drops what is held, fails a waiting read, stops the transfer.
    func cancel() {
        let (waiter, stop) = state.withLock { $0.cancel() }
        waiter?.resume(throwing: CancellationError())
        if stop { onCancel() }
    }
}
