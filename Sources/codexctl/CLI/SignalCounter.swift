import CodexCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A signal that stops a running turn: Ctrl-C (`SIGINT`) or a termination request (`SIGTERM`, what
/// `kill`, systemd and container runtimes send).
enum StopSignal: Sendable {
    case interrupt
    case terminate

    /// The exit status a shell reports for a process this signal ended: 128 + the signal number.
    var exitStatus: Int32 {
        switch self {
        case .interrupt: return 128 + SIGINT
        case .terminate: return 128 + SIGTERM
        }
    }
}

/// `SIGINT` and `SIGTERM` counted by a plain signal handler (installed synchronously, so none is lost
/// between the start of a command and its watcher), read by the ``SignalCounter`` poller on another
/// thread: lock-free atomics, which a signal handler may touch and another thread may read without a
/// race (a plain `sig_atomic_t` is only safe within one thread; ThreadSanitizer reported it).
private let interruptSignals = Atomic<Int>(0)
private let terminateSignals = Atomic<Int>(0)

/// `SIGINT` and `SIGTERM` as events: installs the handlers now and calls `handler` with each signal and
/// the number of stop signals since this counter was made (1, 2, …), from a task polling every 10 ms.
final class SignalCounter: Sendable {
    private let poller: Task<Void, Never>

    init(_ handler: @escaping @Sendable (StopSignal, Int) -> Void) {
        // Initialized before a handler can run. The counters are the process's: a counter counts from
        // their values now, so the signals an earlier one saw (a chat's Ctrl-Cs, before its MCP servers
        // end) are not seen again.
        let base = (interrupts: interruptSignals.load(ordering: .relaxed), terminations: terminateSignals.load(ordering: .relaxed))
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { signal in
            if signal == SIGTERM {
                terminateSignals.wrappingAdd(1, ordering: .relaxed)
            } else {
                interruptSignals.wrappingAdd(1, ordering: .relaxed)
            }
        }
        sigemptyset(&action.sa_mask)
        // Restarted, not failed with EINTR: a blocking read of standard input (chat's line reader) must not
        // take a Ctrl-C for the end of input.
        action.sa_flags = SA_RESTART
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        poller = Task.detached {
            var seen = base
            func count() -> Int { (seen.interrupts - base.interrupts) + (seen.terminations - base.terminations) }
            while !Task.isCancelled {
                let interrupts = interruptSignals.load(ordering: .relaxed)
                let terminations = terminateSignals.load(ordering: .relaxed)
                while seen.terminations < terminations {
                    seen.terminations += 1
                    handler(.terminate, count())
                }
                while seen.interrupts < interrupts {
                    seen.interrupts += 1
                    handler(.interrupt, count())
                }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    /// Stops watching and restores the default actions.
    func stop() {
        poller.cancel()
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}

/// Turns the first stop signal (or a failed standard output) into an interruption of the running turn;
/// a second signal exits at once with its status.
final class InterruptWatcher: Sendable {
    private final class Shared: Sendable {
        /// Behind a reference: read on each stop (see ``SendableReference``).
        let action = Mutex<SendableReference<@Sendable () -> Void>?>(nil)
        /// What stopped the turn: `nil` before anything did; `.some(nil)` for a failed output.
        let stopped = Mutex<StopSignal??>(nil)
    }

    private let shared = Shared()
    private let counter: SignalCounter

    init() {
        let shared = self.shared
        counter = SignalCounter { signal, count in
            guard count == 1 else { exit(signal.exitStatus) }
            Self.stop(shared, by: signal)
        }
        // Output that cannot be written stops the turn like Ctrl-C; `main` reports the output's status.
        ConsoleOutput.onFailure { Self.stop(shared, by: nil) }
    }

    private static func stop(_ shared: Shared, by signal: StopSignal?) {
        let first = shared.stopped.withLock { stopped -> Bool in
            guard stopped == nil else { return false }
            stopped = .some(signal)
            return true
        }
        if first { shared.action.withLock { $0 }?.value() }
    }

    /// What stops the turn; run at once when a stop already came.
    func onInterrupt(_ action: @escaping @Sendable () -> Void) {
        shared.action.withLock { $0 = SendableReference(action) }
        if shared.stopped.withLock({ $0 != nil }) { action() }
    }

    /// Runs `work` in a task a stop cancels (through ``onInterrupt(_:)``); returns its outcome and
    /// whether a stop cancelled it. A stop that comes after the work finished leaves its outcome as it
    /// was: the caller decides what such a late stop means.
    func run<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async -> (outcome: Result<T, any Error>, cancelled: Bool) {
        let task = Task { try await work() }
        onInterrupt { task.cancel() }
        let outcome = await task.result
        return (outcome, task.isCancelled)
    }

    /// The exit status of a stopped turn: 143 after `SIGTERM`, else 130 (Ctrl-C; a failed output's own
    /// status replaces it in `main`).
    var interruptedStatus: Int32 {
        shared.stopped.withLock { stopped in
            if case .some(.some(let signal)) = stopped { return signal.exitStatus }
            return StopSignal.interrupt.exitStatus
        }
    }

    /// Stops watching.
    func stop() {
        counter.stop()
        ConsoleOutput.onFailure(nil)
    }
}
