import CodexCore
import CodexRuntime
import CodexTransport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `codexctl chat`: an interactive session on a persistent thread.
enum ChatCommand: CLICommand {
    static let name = "chat"
    static let summary = "Chat on a persistent thread, with steering and Ctrl-C."
    static let help = CommandHelp(
        command: "chat",
        overview: """
        Chat on a persistent thread: type a line to send it; replies stream as they come. A line typed while a \
        reply streams is added to that turn (steering); a command typed then runs when the reply ends. Ctrl-C \
        interrupts the running turn; Ctrl-C or Ctrl-D at the prompt exits. Commands: /new (a new thread), /threads, \
        /model <id>, /limits, /help. With piped input each line is a turn of its own (or a command), sent after \
        the previous reply, with no prompt; Ctrl-C ends the session. Credentials and the database as for \
        'codexctl send'.
        """,
        options: [
            .value("--thread", "id", "Continue this thread (default: a new one)."),
            .value("--db", "path|url", "The state store (default as for 'codexctl send'; a postgresql:// URL for PostgreSQL)."),
            .value("--model", "id", "The model of new threads.").aliased("-m"),
            .value("--endpoint", "url", "The Responses base URL (default: chosen by the credential)."),
            .value("--auth", "source", "Use only this credential: apikey, codex or session.").suggesting(["apikey", "codex", "session"]),
            CLIAuth.secretsOption,
            CLIAuth.codexHomeOption,
        ] + CLIMCPServers.options
    )

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        guard let parsed = parse(arguments, validate: { try $0.expectNoPositionals() }) else { return Console.Status.usage }
        let auth: ResponsesEnvironment.Source?
        let endpoint: URL?
        let database: String
        let mcp: CLIMCPServers
        do {
            mcp = try CLIMCPServers(parsed)
            auth = try SendOptions.authSource(parsed.options["--auth"])
            endpoint = try SendOptions.endpoint(parsed.options["--endpoint"])
            database = try CLIStorePaths.database(parsed.options["--db"], fallback: CLIStorePaths.stateDatabase())
        } catch {
            return Console.usageFailure(error.message, help: help)
        }
        let live = LiveRuntime(
            auth: auth, codexHome: parsed.options["--codex-home"], store: CLIAuth.storeDirectory(parsed.options["--secrets"]), endpoint: endpoint,
            model: nil, reasoningSummaries: false, database: database, mcp: mcp
        )
        let status = await ChatSession(
            live: live, threadID: parsed.options["--thread"].map(AgentThreadID.init(rawValue:)),
            model: parsed.options["--model"].map(CodexModel.init(rawValue:))
        ).run()
        // A Ctrl-C while MCP servers end does not kill the process and leave them running (a second one
        // still ends it at once).
        let interrupts = InterruptWatcher()
        await live.shutdown()
        interrupts.stop()
        return status
    }
}

/// One interactive session.
struct ChatSession {
    let live: LiveRuntime
    let threadID: AgentThreadID?
    let model: CodexModel?

    /// What the session waits for: a typed line, a line over the limit, the end of input, Ctrl-C, a
    /// request to end (`SIGTERM`, or standard output that cannot be written), or the running turn's end.
    enum Input: Sendable {
        case line(String)
        case lineTooLong
        case endOfInput
        case interrupt
        case stop(status: Int32)
        case turnEnded(TurnEnd)
    }

    /// How a turn's reply ended: completed, interrupted, or failed with the lines to show.
    enum TurnEnd: Sendable {
        case completed
        case interrupted
        case failed(String)
    }

    /// The longest line sent, as for a prompt `send` reads from standard input.
    static let maximumLineBytes = SendOptions.maximumPromptBytes
    /// The most bytes of one line a terminal in canonical mode passes on (Linux's `N_TTY_BUF_SIZE` less
    /// the newline).
    static let terminalLineLimit = 4_095

    /// The most slash commands typed during a reply that wait for it to end.
    static let maximumQueuedCommands = 64

    func run() async -> Int32 {
        let (inputs, feed) = AsyncStream<Input>.makeStream()
        let signals = ChatSignals(feed)
        defer { signals.stop() }
        // At a terminal every line is read as it is typed (a line during a reply steers it, a command waits
        // for the reply's end). Piped input is read one line at a time, the next only once the session is
        // ready for it: each line is a turn of its own, sent after the previous reply ended, and memory
        // follows one line, not the input.
        let interactive = isatty(STDIN_FILENO) == 1
        let gate = interactive ? nil : LineGate()
        LineReader.start(feed, gate: gate)
        do {
            if threadID != nil, let database = live.database, !CLIStateStores.isPostgres(database), !FileManager.default.fileExists(atPath: database) {
                throw AgentRuntimeError(code: .threadNotFound, message: "no database at \(database)")
            }
            let runtime = try await live.make()
            var thread: AgentThread
            if let threadID {
                thread = try await runtime.resumeThread(threadID)
            } else {
                thread = try await runtime.createThread(title: "chat", configuration: AgentThreadConfiguration(model: model))
            }
            Console.error("thread \(thread.id.rawValue)" + (interactive ? " — /help for commands" : "") + "\n")
            var running: AgentTurnExecution?
            var inputEnded = false
            // Piped input: a turn that failed makes the session's status 1 (a script cannot see the
            // error lines); at a terminal the person saw them.
            var turnFailed = false
            var finished: Int32 { turnFailed && !interactive ? Console.Status.failure : Console.Status.success }
            // Commands typed during a reply, run in order once it ends.
            var queued: [String] = []
            // Set once the session must end: the status it ends with, after the running turn is recorded.
            var stopping: Int32?
            /// Runs one line with no turn running: a command, an empty line, or a new turn.
            func idle(_ text: String) async throws {
                if text.hasPrefix("/") {
                    thread = try await command(text, runtime: runtime, thread: thread)
                } else if !text.isEmpty {
                    let execution = try await runtime.start(Request(text: text), in: thread.id)
                    running = execution
                    Task { feed.yield(.turnEnded(await Self.show(execution))) }
                }
            }
            /// With no turn running: the queued commands, then the prompt (or the next piped line).
            func ready() async throws {
                while running == nil, !queued.isEmpty { try await idle(queued.removeFirst()) }
                guard running == nil, !inputEnded else { return }
                if interactive { prompt() }
                gate?.open()
            }
            try await ready()
            for await input in inputs {
                switch input {
                case .endOfInput:
                    // A reply still streaming is shown to its end (piped input), then the session ends.
                    guard running == nil else {
                        inputEnded = true
                        continue
                    }
                    if interactive { Console.line() }
                    return finished
                case .interrupt:
                    guard let execution = running else {
                        if interactive { Console.line() }
                        return interactive ? Console.Status.success : Console.Status.interrupted
                    }
                    execution.cancel()
                    // Piped input has no prompt to return to: Ctrl-C ends the session (after the turn is
                    // recorded interrupted), as a second Ctrl-C would.
                    if !interactive { stopping = stopping ?? Console.Status.interrupted }
                case .stop(let status):
                    // Like Ctrl-C on the running turn (recorded interrupted), then the session ends.
                    guard let execution = running else { return status }
                    stopping = stopping ?? status
                    execution.cancel()
                case .turnEnded(let end):
                    running = nil
                    switch end {
                    case .completed: break
                    case .interrupted: Console.error("interrupted\n")
                    case .failed(let lines):
                        Console.error("\(lines)\n")
                        turnFailed = true
                    }
                    if let stopping { return stopping }
                    try await ready()
                    if running == nil, inputEnded { return finished }
                case .lineTooLong:
                    Console.error("not sent: the line is longer than 1 MiB\n")
                    if running == nil { try await ready() }
                case .line(let line):
                    guard stopping == nil else { continue }
                    // A terminal's line discipline keeps at most 4,095 bytes of a line and drops the rest
                    // without a word: such a line is cut, and sending it would pass off part as the whole.
                    if interactive, line.utf8.count >= Self.terminalLineLimit {
                        Console.error("not sent: the terminal keeps at most \(Self.terminalLineLimit) bytes of a line, so this one was cut; pipe longer text in (codexctl send, or chat < file)\n")
                        if running == nil { try await ready() }
                        continue
                    }
                    let text = line.trimmingCharacters(in: .whitespaces)
                    guard let execution = running else {
                        try await idle(text)
                        if running == nil { try await ready() }
                        continue
                    }
                    guard !text.isEmpty else { continue }
                    if text.hasPrefix("/") || !interactive {
                        // Never dropped: it runs when the reply ends (a piped line never arrives here, the gate
                        // holds it, but it would wait the same way).
                        guard queued.count < Self.maximumQueuedCommands else {
                            Console.error("not queued: \(Self.maximumQueuedCommands) commands already wait for the reply to end\n")
                            continue
                        }
                        queued.append(text)
                        if interactive { Console.error("(runs when the reply ends)\n") }
                        continue
                    }
                    do {
                        try await execution.steer(text)
                        Console.error("(added to the turn)\n")
                    } catch {
                        Console.error("not added: \((error as? AgentRuntimeError)?.code.rawValue ?? "failed")\n")
                    }
                }
            }
            return finished
        } catch {
            CLIFailure(error).report(json: false)
            if let hint = (error as? AgentRuntimeError).flatMap(SendOutput.hint) { Console.error("hint: \(hint)\n") }
            return Console.Status.failure
        }
    }

    private func prompt() {
        Console.out("> ")
    }

    /// Streams a turn's reply; returns how it ended. Every reply ends with a newline, and each message of
    /// a turn (a commentary, then the answer) starts on a line of its own.
    private static func show(_ execution: AgentTurnExecution) async -> TurnEnd {
        var endsWithNewline = true
        do {
            for try await event in execution.events {
                switch event {
                case .assistantMessageDelta(_, _, let text):
                    Console.out(text)
                    if !text.isEmpty { endsWithNewline = text.hasSuffix("\n") }
                case .progress(.messageCompleted), .progress(.messageStarted), .messageCommitted:
                    if !endsWithNewline { Console.out("\n") }
                    endsWithNewline = true
                default:
                    break
                }
            }
            if !endsWithNewline { Console.out("\n") }
            return .completed
        } catch is CancellationError {
            if !endsWithNewline { Console.out("\n") }
            return .interrupted
        } catch {
            if !endsWithNewline { Console.out("\n") }
            // As `send` shows it: the request ID, and the hint when there is one.
            let hint = (error as? AgentRuntimeError).flatMap(SendOutput.hint).map { "\nhint: \($0)" } ?? ""
            return .failed(CLIFailure(error).textLine + hint)
        }
    }

    /// Runs a `/command`; returns the thread to continue on.
    private func command(_ text: String, runtime: AgentRuntime, thread: AgentThread) async throws -> AgentThread {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        switch words.first {
        case "/new":
            let created = try await runtime.createThread(title: "chat", configuration: thread.configuration)
            Console.line("new thread \(created.id.rawValue)")
            return created
        case "/threads":
            let threads = try await runtime.threads()
            for listed in threads.prefix(20) {
                let marker = listed.id == thread.id ? "*" : " "
                Console.line("\(marker) \(listed.id.rawValue)  \(Console.display(listed.title ?? ""))  \(listed.updatedAt)")
            }
            Console.line(threads.count == 1 ? "1 thread" : "\(threads.count) threads")
            return thread
        case "/model":
            guard words.count == 2 else {
                Console.line("usage: /model <id> (now \(thread.configuration.model?.rawValue ?? "the default"))")
                return thread
            }
            var configuration = thread.configuration
            configuration.model = CodexModel(rawValue: words[1])
            let updated = try await runtime.updateThreadConfiguration(configuration, for: thread.id)
            Console.line("model \(words[1])")
            return updated
        case "/limits":
            let limits = try await runtime.rateLimits()
            if limits.isEmpty { Console.line("no limits reported yet") }
            for limit in limits {
                let primary = limit.primary.map { "\(Int($0.remainingPercent.rounded()))% left" } ?? "unavailable"
                Console.line("\(Console.display(limit.limitID)): \(primary)")
            }
            return thread
        default:
            Console.line("commands: /new, /threads, /model <id>, /limits, /help; Ctrl-C interrupts a reply, Ctrl-D exits")
            return thread
        }
    }
}

/// Reads standard input line by line on a thread of its own (a blocking read never holds Swift's pool),
/// in chunks with `read(2)`: a line is held only up to ``ChatSession/maximumLineBytes``; the rest of a
/// longer one is skipped as it arrives, so memory follows the limit, not the input. With a gate (piped
/// input), each line (and the end of input) waits until the session opens it, and a last line without
/// its newline is a line; without one (a terminal), text left with Ctrl-D instead of Enter is dropped.
enum LineReader {
    static func start(_ feed: AsyncStream<ChatSession.Input>.Continuation, gate: LineGate?) {
        let thread = Thread {
            var splitter = LineSplitter(limit: ChatSession.maximumLineBytes)
            let input = try? BoundedInputFile("-")
            while let input, let chunk = try? input.read(maximum: 64 * 1024), !chunk.isEmpty {
                for line in splitter.feed(chunk) {
                    gate?.pass()
                    feed.yield(line)
                }
            }
            // The last line of a file may lack its newline; at a terminal, text typed and left with Ctrl-D
            // instead of Enter was never submitted, and is dropped.
            if let last = splitter.finish(), gate != nil {
                gate?.pass()
                feed.yield(last)
            }
            gate?.pass()
            feed.yield(.endOfInput)
        }
        thread.name = "codexctl.chat.input"
        thread.start()
    }
}

/// Lets the line reader deliver one line each time the session is ready for the next (piped input).
final class LineGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    /// The session is ready for one more line.
    func open() { semaphore.signal() }

    /// Waits, on the reader's thread, until the session is ready.
    func pass() { semaphore.wait() }
}

/// Bytes into lines: `\n` or `\r\n` ends a line (not kept); a line longer than `limit` bytes is
/// reported once as too long and its bytes are dropped as they come.
struct LineSplitter {
    let limit: Int
    private var current: [UInt8] = []
    private var overflowed = false

    init(limit: Int) {
        self.limit = limit
    }

    /// The lines `chunk` completes.
    mutating func feed(_ chunk: [UInt8]) -> [ChatSession.Input] {
        var lines: [ChatSession.Input] = []
        var start = chunk.startIndex
        while start < chunk.endIndex {
            let newline = chunk[start...].firstIndex(of: 0x0A)
            append(chunk[start..<(newline ?? chunk.endIndex)])
            guard let newline else { break }
            lines.append(take())
            start = newline + 1
        }
        return lines
    }

    /// The last line, when the input ended without a newline after it.
    mutating func finish() -> ChatSession.Input? {
        current.isEmpty && !overflowed ? nil : take()
    }

    private mutating func append(_ bytes: ArraySlice<UInt8>) {
        guard !overflowed else { return }
        guard current.count + bytes.count <= limit + 1 else {
            overflowed = true
            current = []
            return
        }
        current += bytes
    }

    private mutating func take() -> ChatSession.Input {
        defer {
            current = []
            overflowed = false
        }
        if current.last == 0x0D { current.removeLast() }
        guard !overflowed, current.count <= limit else { return .lineTooLong }
        return .line(String(decoding: current, as: UTF8.self))
    }
}

/// Ctrl-C, `SIGTERM` and a failed standard output as inputs of the session.
final class ChatSignals: Sendable {
    private let counter: SignalCounter

    init(_ feed: AsyncStream<ChatSession.Input>.Continuation) {
        counter = SignalCounter { signal, _ in
            switch signal {
            case .interrupt: feed.yield(.interrupt)
            case .terminate: feed.yield(.stop(status: signal.exitStatus))
            }
        }
        // `main` replaces the status with the output failure's own.
        ConsoleOutput.onFailure { feed.yield(.stop(status: Console.Status.failure)) }
    }

    func stop() {
        counter.stop()
        ConsoleOutput.onFailure(nil)
    }
}
