package import Dispatch
import Synchronization

extension DispatchQueue {
    /// Runs `body` on this queue while the calling task is suspended (not blocked), and returns or throws
    /// what it did. Blocking work (a lock wait, an `fsync`, a database call) then holds this queue's
    /// thread, never a thread of Swift's cooperative pool.
    ///
    /// Once `body` has run, the queue holds nothing of it: the caller's own reference is the last, and it
    /// goes when this returns, before the caller's next statement. A block given to `async` is released
    /// only after it returns, a moment after it has resumed the caller; without this, a caller could drop
    /// its last reference to a store and still find its database open, its write-ahead log in place or
    /// its lock held, because the queue's block still held what `body` captured.
    package func perform<T: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        let work = QueuedWork(body)
        let outcome: Result<T, Failure> = await withCheckedContinuation { continuation in
            self.async {
                // `run()` returns nil only for a second run, and this block is the work's only runner,
                // run once by the queue: the caller is always resumed.
                if let outcome = work.run() { continuation.resume(returning: outcome) }
            }
        }
        return try outcome.get()
    }
}

/// A body for ``Dispatch/DispatchQueue/perform(_:)`` that lets go of itself, and of everything it
/// captured, as soon as it has run: inside `run()`, so before the waiting caller is resumed.
final class QueuedWork<T: Sendable, Failure: Error>: Sendable {
    private let body: Mutex<(@Sendable () throws(Failure) -> T)?>

    /// Wraps `body`, to be run once.
    init(_ body: @escaping @Sendable () throws(Failure) -> T) {
        self.body = Mutex(body)
    }

    /// Runs the body and releases it before returning; nil when it has already run.
    func run() -> Result<T, Failure>? {
        guard let body = body.withLock({ $0.take() }) else { return nil }
        do throws(Failure) {
            return .success(try body())
        } catch {
            return .failure(error)
        }
    }
}
