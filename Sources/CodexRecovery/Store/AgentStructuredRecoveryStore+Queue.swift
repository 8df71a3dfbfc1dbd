import Dispatch

extension AgentStructuredRecoveryStore {
    /// Runs `body` on the store's serial queue and returns its result. The calling task is suspended,
    /// not blocked, so a `flock` wait on another process or a slow `fsync` holds only the store's own
    /// thread (as the SQLite store keeps its work on its queues). Bodies never await: a lock taken in
    /// one is released before it returns.
    ///
    /// What `body` captures (an operation's lease, say) is released before the caller resumes: the
    /// queue's block outlives the resumption by a moment, so a lease captured by it could otherwise
    /// still be held when the call has returned, and a status read at once would see it running.
    func perform<T: Sendable>(_ body: @escaping @Sendable () throws(AgentRecoveryError) -> T) async throws(AgentRecoveryError) -> T {
        let work = RecoveryQueuedWork(body)
        let result: Result<T, AgentRecoveryError> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work.run()) }
        }
        return try result.get()
    }
}

/// A body for the store's queue that lets go of it, and of everything it captured, as soon as it has
/// run: before the waiting caller is resumed, not when the queue releases its block.
final class RecoveryQueuedWork<T: Sendable>: @unchecked Sendable {
    // @unchecked: `body` is read and cleared once, by `run()` on the store's serial queue.
    private var body: (@Sendable () throws(AgentRecoveryError) -> T)?

    init(_ body: @escaping @Sendable () throws(AgentRecoveryError) -> T) {
        self.body = body
    }

    /// Runs the body once (a second call fails with `storage_failure`) and releases it before returning.
    func run() -> Result<T, AgentRecoveryError> {
        guard let body else { return .failure(AgentRecoveryError(code: .storageFailure, message: "a store task ran twice")) }
        self.body = nil
        do throws(AgentRecoveryError) {
            return .success(try body())
        } catch {
            return .failure(error)
        }
    }
}

extension RecoveryPartition {
    /// ``AgentStructuredRecoveryStore/perform(_:)`` on this partition's store.
    func perform<T: Sendable>(_ body: @escaping @Sendable () throws(AgentRecoveryError) -> T) async throws(AgentRecoveryError) -> T {
        try await store.perform(body)
    }
}
