package import Dispatch

extension DispatchQueue {
    /// Runs `body` on this queue while the calling task is suspended (not blocked), and returns or throws
    /// what it did. Blocking work (a lock wait, an `fsync`, a database call) then holds this queue's
    /// thread, never a thread of Swift's cooperative pool.
    ///
    /// What `body` captures (a connection, a lease, the store itself) is released on the queue before the
    /// caller resumes. A block given to `async` is released only after it returns, a moment after it has
    /// resumed the caller; so without this, the caller could drop its last reference to a store and still
    /// find its database open, its write-ahead log undeleted or its lock held.
    package func perform<T: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        let work = QueuedWork(body)
        let outcome: Result<T, Failure> = await withCheckedContinuation { continuation in
            self.async {
                // `run()` returns nil only for a second run, which cannot happen: this block is the
                // work's only runner, and a queue runs a block once.
                if let outcome = work.run() { continuation.resume(returning: outcome) }
            }
        }
        return try outcome.get()
    }
}

/// A body for ``Dispatch/DispatchQueue/perform(_:)`` that lets go of itself, and of everything it
/// captured, as soon as it has run: inside `run()`, so before the waiting caller is resumed.
package final class QueuedWork<T: Sendable, Failure: Error>: @unchecked Sendable {
    // @unchecked: `body` is read and cleared once, by `run()` on the queue.
    private var body: (@Sendable () throws(Failure) -> T)?

    /// Wraps `body`, to be run once.
    package init(_ body: @escaping @Sendable () throws(Failure) -> T) {
        self.body = body
    }

    /// Runs the body and releases it before returning; nil when it has already run.
    package func run() -> Result<T, Failure>? {
        guard let body else { return nil }
        self.body = nil
        do throws(Failure) {
            return .success(try body())
        } catch {
            return .failure(error)
        }
    }
}
