import CodexCore
import CodexRuntime
import CodexSchema
import CodexStorageSQLite
import CodexTransport
import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One `codexctl send` run: credentials, the runtime, the streamed turn, Ctrl-C and the exit status.
struct SendSession {
    let options: SendOptions

    /// Exit status of an interrupted turn (the shell's 128 + SIGINT).
    static let interruptedStatus: Int32 = 130

    func run() async -> Int32 {
        let output = SendOutput(json: options.json, showsProgress: options.verbose || isatty(STDERR_FILENO) == 1, structured: options.format != nil)
        // Watching from the start: a Ctrl-C that comes before the turn exists stops it as soon as it does.
        let interrupts = InterruptWatcher()
        defer { interrupts.stop() }
        do {
            if options.threadID != nil, !FileManager.default.fileExists(atPath: options.database) {
                throw AgentRuntimeError(code: .threadNotFound, message: "no database at \(options.database)")
            }
            let runtime = try LiveRuntime(
                auth: options.auth, codexHome: options.codexHome, store: options.store, endpoint: options.endpoint, model: options.model,
                reasoningSummaries: options.reasoningSummaries, database: options.ephemeral ? nil : options.database
            ).make()
            let thread = try await thread(in: runtime)
            var request = Request(text: options.prompt, images: options.images, executionMode: options.ephemeral ? .ephemeral : .threaded)
            if options.model != nil || options.effort != nil {
                request.modelOverride = CodexModelConfiguration(
                    model: options.model ?? thread.configuration.model ?? .default, reasoningEffort: options.effort
                )
            }
            let execution: AgentTurnExecution
            if let format = options.format {
                execution = try await runtime.start(request, in: thread.id, format: format)
            } else {
                execution = try await runtime.start(request, in: thread.id)
            }
            interrupts.onInterrupt { execution.cancel() }
            for try await event in execution.events { output.show(event) }
            output.finished(threadID: thread.id, persistent: !options.ephemeral)
            return Console.Status.success
        } catch is CancellationError {
            output.interrupted()
            return Self.interruptedStatus
        } catch {
            output.fail(error)
            return Console.Status.failure
        }
    }

    private func thread(in runtime: AgentRuntime) async throws -> AgentThread {
        if let id = options.threadID { return try await runtime.resumeThread(id) }
        let title = options.prompt.split(whereSeparator: \.isNewline).first.map { String($0.prefix(60)) }
        return try await runtime.createThread(title: title)
    }
}

/// Ctrl-C presses counted by a plain signal handler (installed synchronously, so none is lost between
/// the start of a command and its watcher), read by the ``SignalCounter`` poller on another thread: a
/// lock-free atomic, which a signal handler may touch and another thread may read without a race (a
/// plain `sig_atomic_t` is only safe within one thread; ThreadSanitizer reported it).
private let interruptPresses = Atomic<Int>(0)

/// Ctrl-C as events: installs the handler now and calls `handler` with the press count (1, 2, …) for each
/// press, from a task polling every 10 ms.
final class SignalCounter: Sendable {
    private let poller: Task<Void, Never>

    init(_ handler: @escaping @Sendable (Int) -> Void) {
        _ = interruptPresses.load(ordering: .relaxed) // initialized before the handler can run
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in interruptPresses.wrappingAdd(1, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        // Restarted, not failed with EINTR: a blocking read of standard input (chat's line reader) must not
        // take a Ctrl-C for the end of input.
        action.sa_flags = SA_RESTART
        sigaction(SIGINT, &action, nil)
        poller = Task.detached {
            var seen = 0
            while !Task.isCancelled {
                let now = interruptPresses.load(ordering: .relaxed)
                while seen < now {
                    seen += 1
                    handler(seen)
                }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    func stop() {
        poller.cancel()
        signal(SIGINT, SIG_DFL)
    }
}

/// Turns Ctrl-C into an interruption of the running turn; a second Ctrl-C exits at once.
final class InterruptWatcher: Sendable {
    private final class Shared: Sendable {
        let action = Mutex<(@Sendable () -> Void)?>(nil)
        let pressed = Mutex(false)
    }

    private let shared = Shared()
    private let counter: SignalCounter

    init() {
        let shared = self.shared
        counter = SignalCounter { count in
            guard count == 1 else { exit(SendSession.interruptedStatus) }
            shared.pressed.withLock { $0 = true }
            shared.action.withLock { $0 }?()
        }
    }

    /// What the first Ctrl-C does; run at once when one already came.
    func onInterrupt(_ action: @escaping @Sendable () -> Void) {
        shared.action.withLock { $0 = action }
        if shared.pressed.withLock({ $0 }) { action() }
    }

    func stop() {
        counter.stop()
    }
}
