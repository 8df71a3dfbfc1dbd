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

/// One `codexctl send` run: credentials, the runtime, the streamed turn, Ctrl-C, SIGTERM and a failed
/// output (each stops the turn, recorded interrupted) and the exit status.
struct SendSession {
    let options: SendOptions

    func run() async -> Int32 {
        let live = LiveRuntime(
            auth: options.auth, codexHome: options.codexHome, store: options.store, endpoint: options.endpoint, model: options.model,
            reasoningSummaries: options.reasoningSummaries, database: options.ephemeral ? nil : options.database, mcp: options.mcp
        )
        // Watching from the start: a Ctrl-C, a SIGTERM or a failed write that comes before the turn exists
        // stops it as soon as it does. And to the end: one that comes while MCP servers end does not kill
        // the process and leave them running (a second one still ends it at once).
        let interrupts = InterruptWatcher()
        defer { interrupts.stop() }
        let status = await run(live, interrupts)
        // MCP servers end before the process does (closing their input, then signals), not at exit.
        await live.shutdown()
        return status
    }

    private func run(_ live: LiveRuntime, _ interrupts: InterruptWatcher) async -> Int32 {
        let output = SendOutput(json: options.json, showsProgress: options.verbose || isatty(STDERR_FILENO) == 1, structured: options.format != nil)
        do {
            if options.threadID != nil, !CLIStateStores.isPostgres(options.database), !FileManager.default.fileExists(atPath: options.database) {
                throw AgentRuntimeError(code: .threadNotFound, message: "no database at \(options.database)")
            }
            let runtime = try await live.make()
            let thread = try await thread(in: runtime)
            // A new thread's ID is printed once, at once, on standard error (standard output carries only the
            // reply), so a script or a person can continue it with --thread or find it with `threads list`.
            if options.threadID == nil, !options.ephemeral, !options.json { Console.error("thread \(thread.id.rawValue)\n") }
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
            output.finished(threadID: thread.id, persistent: !options.ephemeral && options.threadID != nil)
            return Console.Status.success
        } catch is CancellationError {
            output.interrupted()
            return interrupts.interruptedStatus
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
