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

/// Turns SIGINT into an interruption of the running turn; a second Ctrl-C exits at once.
final class InterruptWatcher: @unchecked Sendable {
    // @unchecked: the dispatch source is created and cancelled by the one task that runs the turn; the
    // rest of the state is a Mutex.
    private struct State {
        var signals = 0
        var action: (@Sendable () -> Void)?
    }

    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private let source: any DispatchSourceSignal
    private let shared = Shared()

    init() {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let shared = self.shared
        source.setEventHandler {
            let (count, action) = shared.state.withLock { state -> (Int, (@Sendable () -> Void)?) in
                state.signals += 1
                return (state.signals, state.action)
            }
            if count == 1 { action?() } else { exit(SendSession.interruptedStatus) }
        }
        source.resume()
    }

    /// What the first Ctrl-C does; run at once when one already came.
    func onInterrupt(_ action: @escaping @Sendable () -> Void) {
        let pending = shared.state.withLock { state -> Bool in
            state.action = action
            return state.signals > 0
        }
        if pending { action() }
    }

    func stop() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }
}
