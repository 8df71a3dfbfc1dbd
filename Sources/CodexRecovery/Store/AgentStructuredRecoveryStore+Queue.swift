import CodexCore
import Dispatch

extension AgentStructuredRecoveryStore {
    /// Runs `body` on the store's serial queue and returns its result. The calling task is suspended,
    /// not blocked, so a `flock` wait on another process or a slow `fsync` holds only the store's own
    /// thread (as the SQLite store keeps its work on its queues). Bodies never await: a lock taken in
    /// one is released before it returns.
    ///
    /// What `body` captures (an operation's lease, say) is not kept by the queue once the body has run
    /// (see `DispatchQueue.perform`), so a status read right after the call never sees the operation
    /// running.
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
