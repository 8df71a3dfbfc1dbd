import Foundation
import Synchronization

/// The automatic captures running in the background, so they can be awaited and stopped.
final class MemoryCaptureTasks: Sendable {
    private let tasks = Mutex<(next: UInt64, running: [UInt64: Task<Void, Never>])>((0, [:]))

    /// Starts `body` as a tracked task; it leaves the registry when it ends.
    func start(_ body: @escaping @Sendable () async -> Void) {
        tasks.withLock { state in
            let id = state.next
            state.next += 1
            state.running[id] = Task { [weak self] in
                await body()
                self?.finished(id)
            }
        }
    }

    private func finished(_ id: UInt64) {
        _ = tasks.withLock { $0.running.removeValue(forKey: id) }
    }

    /// Returns when every capture started before and during the wait has ended.
    func waitForAll() async {
        while true {
            let running = tasks.withLock { Array($0.running.values) }
            if running.isEmpty { return }
            for task in running { await task.value }
        }
    }

    /// Cancels every running capture (nothing it has not stored yet is stored).
    func cancelAll() {
        tasks.withLock { state in
            for task in state.running.values { task.cancel() }
        }
    }
}
