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
            guard let credential = try credential() else {
                output.fail(AgentRuntimeError(code: .notSignedIn, message: "no credentials found"))
                return Console.Status.failure
            }
            let runtime = try makeRuntime(credential)
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

    /// The first credential found, in the order `send` documents, with the endpoint profile it needs
    /// (an API key never goes to the ChatGPT backend).
    private func credential() throws -> (provider: any AuthProvider, profile: ResponsesEndpoint.Profile, baseURL: URL?)? {
        let order: [SendOptions.AuthSource] = options.auth.map { [$0] } ?? [.apikey, .codex, .session]
        let environment = ProcessInfo.processInfo.environment
        for source in order {
            switch source {
            case .apikey:
                guard let provider = APIKeyAuthProvider() else { continue }
                let base = environment["OPENAI_BASE_URL"].flatMap { $0.isEmpty ? nil : URL(string: $0) }
                return (provider, .publicAPI, base)
            case .codex:
                let file = CLIAuth.codexFile(options.codexHome)
                guard let contents = try file.read() else { continue }
                if case .apiKey = contents { return (CodexCLIAuthProvider(file: file), .publicAPI, nil) }
                return (CodexCLIAuthProvider(file: file), .chatGPT, nil)
            case .session:
                if let key = try CLIAuth.savedAPIKey(in: options.store) {
                    return (APIKeyAuthProvider(apiKey: key), .publicAPI, environment["OPENAI_BASE_URL"].flatMap { $0.isEmpty ? nil : URL(string: $0) })
                }
                guard FileManager.default.fileExists(atPath: options.store.path),
                      let session = try ChatGPTSessionStore(store: try FileSecureStore(readingAt: options.store)).load() else { continue }
                let provider = ChatGPTSessionAuthProvider(
                    session: session, issuer: .openAI, httpClient: DefaultHTTPClient(),
                    store: ChatGPTSessionStore(store: try FileSecureStore(directory: options.store))
                )
                return (provider, .chatGPT, nil)
            }
        }
        return nil
    }

    private func makeRuntime(_ credential: (provider: any AuthProvider, profile: ResponsesEndpoint.Profile, baseURL: URL?)) throws -> AgentRuntime {
        var configuration = CodexResponsesBackendConfiguration(enableReasoningSummaries: options.reasoningSummaries)
        if let base = options.endpoint ?? credential.baseURL {
            configuration.endpoint = try ResponsesEndpoint(baseURL: base, profile: credential.profile)
        } else {
            configuration.endpoint = credential.profile == .chatGPT ? .chatGPT : .publicAPI
        }
        if let model = options.model { configuration.model = model }
        let backend = CodexResponsesBackend(configuration: configuration, authProvider: credential.provider)
        return try AgentRuntime(configuration: .init(backend: backend, stateStore: try stateStore()))
    }

    /// In memory for `--ephemeral`; else the SQLite database, its directory created private (0700).
    private func stateStore() throws -> any RuntimeStateStore {
        guard !options.ephemeral else { return InMemoryRuntimeStateStore() }
        let directory = URL(fileURLWithPath: options.database).deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: directory.path) {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        return try SQLiteRuntimeStateStore(path: options.database)
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
