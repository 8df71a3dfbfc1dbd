import CodexCore
import Synchronization

/// Records what executors do, for concurrency and ordering assertions: how many run at once (and the
/// peak), the order of starts and ends, and barriers and gates that hold executors until the test or
/// other executors let them go. Every wait is for an event, never for time.
final class ToolProbe: Sendable {
    private struct State {
        var running = 0
        var peak = 0
        var log: [String] = []
        var arrived = 0
        var barrierWaiters: [CheckedContinuation<Void, Never>] = []
        var opened: Set<String> = []
        var gateWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    }

    private let state = Mutex(State())

    /// The most executors that ran at once.
    var peak: Int { state.withLock { $0.peak } }
    /// "start <id>" and "end <id>" in the order they happened.
    var log: [String] { state.withLock { $0.log } }

    /// Notes that `id` started.
    func enter(_ id: String) {
        state.withLock { state in
            state.running += 1
            state.peak = max(state.peak, state.running)
            state.log.append("start \(id)")
        }
    }

    /// Notes that `id` ended.
    func leave(_ id: String) {
        state.withLock { state in
            state.running -= 1
            state.log.append("end \(id)")
        }
    }

    /// Waits until `size` callers are waiting here together, then lets them all go (again and again).
    func barrier(_ size: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let release: [CheckedContinuation<Void, Never>] = state.withLock { state in
                state.arrived += 1
                state.barrierWaiters.append(continuation)
                guard state.arrived == size else { return [] }
                state.arrived = 0
                defer { state.barrierWaiters = [] }
                return state.barrierWaiters
            }
            release.forEach { $0.resume() }
        }
    }

    /// Opens gate `name`, letting its waiters (and later ones) go.
    func open(_ name: String) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.opened.insert(name)
            defer { state.gateWaiters[name] = nil }
            return state.gateWaiters[name] ?? []
        }
        waiters.forEach { $0.resume() }
    }

    /// Waits until gate `name` is open.
    func wait(for name: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let openNow = state.withLock { state -> Bool in
                if state.opened.contains(name) { return true }
                state.gateWaiters[name, default: []].append(continuation)
                return false
            }
            if openNow { continuation.resume() }
        }
    }
}
