import Dispatch

extension AgentStructuredRecoveryStore {
    /// Runs `body` on the store's serial queue and returns its result. The calling task is suspended,
    /// not blocked, so a `flock` wait on another process or a slow `fsync` holds only the store's own
    /// thread (as the SQLite store keeps its work on its queues). Bodies never await: a lock taken in
    /// one is released before it returns.
    func perform<T: Sendable>(_ body: @escaping @Sendable () throws(AgentRecoveryError) -> T) async throws(AgentRecoveryError) -> T {
        let result: Result<T, AgentRecoveryError> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(AgentRecoveryError) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }
}

extension RecoveryPartition {
    /// ``AgentStructuredRecoveryStore/perform(_:)`` on this partition's store.
    func perform<T: Sendable>(_ body: @escaping @Sendable () throws(AgentRecoveryError) -> T) async throws(AgentRecoveryError) -> T {
        try await store.perform(body)
    }
}
