import CodexCore
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
        try await queue.perform(body)
    }
}

extension RecoveryPartition {
    /// ``AgentStructuredRecoveryStore/perform(_:)`` on this partition's store.
    func perform<T: Sendable>(_ body: @escaping @Sendable () throws(AgentRecoveryError) -> T) async throws(AgentRecoveryError) -> T {
        try await store.perform(body)
    }
}
