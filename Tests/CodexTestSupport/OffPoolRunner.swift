import Foundation
import Synchronization

/// Runs a long CPU-bound test body on its own thread instead of one of the cooperative pool's few
/// threads (two on a 2-core CI machine), and lets only one such body run at a time, so one core always
/// stays free for the suite's network tests, whose timeouts are real.
///
/// The body runs outside any task, so it must not call `#expect` or `Issue.record`: return what the
/// test should assert and assert it afterwards. Time spent queued at the gate counts against a suite's
/// time limit: a suite with such bodies sets its limit (a hang guard) well above the whole queue.
/// - Parameter body: The work to run.
/// - Returns: What `body` returned.
/// - Throws: What `body` threw.
public func runOffCooperativePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    await CPUBoundGate.shared.enter()
    return try await ChildProcess.onOwnThread {
        defer { CPUBoundGate.shared.leave() }
        return try body()
    }
}

/// A first-in, first-out gate that admits one CPU-bound test body at a time.
private final class CPUBoundGate: Sendable {
    static let shared = CPUBoundGate()

    private struct State {
        var busy = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state -> Bool in
                if state.busy {
                    state.waiting.append(continuation)
                    return false
                }
                state.busy = true
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty {
                state.busy = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
