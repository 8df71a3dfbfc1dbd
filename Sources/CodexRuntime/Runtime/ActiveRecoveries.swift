import CodexRecovery
import Foundation
import Synchronization

/// The structured recovery sends running through a runtime, so sign-out and background expiry can
/// suspend them (their budgets and saved completions are kept).
final class ActiveRecoveries: Sendable {
    private struct Entry {
        let handle: AgentStructuredRecoveryHandle
        let store: AgentStructuredRecoveryStore
        let recovery: AgentStructuredRecovery
    }

    private let entries = Mutex<[UUID: Entry]>([:])

    /// Records a running send until `body` returns.
    func running<Value>(
        _ handle: AgentStructuredRecoveryHandle, store: AgentStructuredRecoveryStore, recovery: AgentStructuredRecovery,
        _ body: () async throws -> Value
    ) async throws -> Value {
        let key = UUID()
        entries.withLock { $0[key] = Entry(handle: handle, store: store, recovery: recovery) }
        defer { _ = entries.withLock { $0.removeValue(forKey: key) } }
        return try await body()
    }

    /// Suspends every running send (each owner stops within its lifecycle poll interval).
    /// - Returns: How many were asked to stop.
    @discardableResult
    func suspendAll() async -> Int {
        let running = entries.withLock { Array($0.values) }
        for entry in running { try? await entry.recovery.suspend(entry.handle, store: entry.store) }
        return running.count
    }
}
