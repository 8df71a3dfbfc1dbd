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
    /// Callers waiting for every send running at a point to end, by waiter ID.
    private let waiters = Mutex<[UUID: (pending: Set<UUID>, continuation: CheckedContinuation<Void, Never>)]>([:])

    /// Records a running send until `body` returns.
    func running<Value>(
        _ handle: AgentStructuredRecoveryHandle, store: AgentStructuredRecoveryStore, recovery: AgentStructuredRecovery,
        _ body: () async throws -> Value
    ) async throws -> Value {
        let key = UUID()
        entries.withLock { $0[key] = Entry(handle: handle, store: store, recovery: recovery) }
        defer { ended(key) }
        return try await body()
    }

    private func ended(_ key: UUID) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
        let done = waiters.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            var done: [CheckedContinuation<Void, Never>] = []
            for (id, waiter) in waiters where waiter.pending.contains(key) {
                var pending = waiter.pending
                pending.remove(key)
                if pending.isEmpty {
                    done.append(waiter.continuation)
                    waiters[id] = nil
                } else {
                    waiters[id] = (pending, waiter.continuation)
                }
            }
            return done
        }
        for continuation in done { continuation.resume() }
    }

    /// The sends running now (a send started later is not among them).
    func snapshot() -> [UUID] {
        entries.withLock { Array($0.keys) }
    }

    /// Asks the sends in `keys` to suspend (each owner stops within its lifecycle poll interval).
    func suspend(_ keys: [UUID]) async {
        let targets = entries.withLock { entries in keys.compactMap { entries[$0] } }
        for entry in targets { try? await entry.recovery.suspend(entry.handle, store: entry.store) }
    }

    /// Returns once every send in `keys` has ended.
    func waitUntilEnded(_ keys: [UUID]) async {
        let id = UUID()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = entries.withLock { entries -> Bool in
                let pending = Set(keys).filter { entries[$0] != nil }
                guard !pending.isEmpty else { return true }
                waiters.withLock { $0[id] = (pending, continuation) }
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
