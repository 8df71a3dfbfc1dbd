import CodexCore
import CodexRuntime
import CodexSchema
import CodexStorageSQLite
import CodexTransport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `codexctl send`: one live turn against the real service (or `--endpoint`), streamed to stdout.
enum SendCommand: CLICommand {
    static let name = "send"
    static let summary = "Send one prompt to the service and stream the reply."
    /// The reasoning efforts `--effort` takes, by wire name.
    static let efforts = ["none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra"]
    static let help = CommandHelp(
        command: "send",
        overview: """
        Send one prompt and stream the reply to stdout. Credentials, first found unless --auth picks one: \
        OPENAI_API_KEY (the public API), the Codex CLI's auth.json ($CODEX_HOME, default ~/.codex; read, never \
        rewritten), the key or session saved by CodexKit (--secrets). Progress, reasoning summaries, tool activity and \
        rate limits go to stderr when it is a terminal or with --verbose. Ctrl-C interrupts the turn (recorded \
        interrupted, connection closed) and exits 130. The turn is kept in a SQLite database (--db) unless \
        --ephemeral; continue a thread with --thread.
        """,
        arguments: [("<prompt> | -", """
            The prompt; '-' reads it from standard input (at most 1 MiB). Without a prompt, a standard input that is not a \
            terminal is the prompt. A prompt with piped input: the input is appended as <stdin>…</stdin>, as the Codex CLI's \
            exec does (an empty pipe or /dev/null adds nothing).
            """)],
        argumentSynopsis: "[<prompt> | -]",
        options: [
            .value("--model", "id", "The model (default: the thread's, else gpt-5.6-sol).").aliased("-m"),
            .value("--effort", "effort", "The reasoning effort: none, minimal, low, medium, high, xhigh, max, ultra.")
                .suggesting(efforts),
            .value("--image", "file", "An image sent with the prompt (PNG, JPEG, GIF, WebP, HEIC).", repeatable: true),
            .value("--schema", "file", "A JSON Schema the reply must match: validated locally, printed as one JSON value.").aliased("--output-schema"),
            .flag("--ephemeral", "Keep nothing: no database is opened or written."),
            .value("--thread", "id", "Continue this thread of the database."),
            .value("--db", "path|url", "The state store: a SQLite file (default $XDG_STATE_HOME/codexkit/state.sqlite, else ~/.local/state/codexkit/state.sqlite) or a postgresql:// URL."),
            .value("--endpoint", "url", "The Responses base URL (default: chosen by the credential: OPENAI_BASE_URL or the public API for a key, the ChatGPT backend for a session)."),
            .value("--auth", "source", "Use only this credential: apikey, codex or session.").suggesting(["apikey", "codex", "session"]),
            .flag("--reasoning-summaries", "Ask the model for reasoning summaries (shown on stderr)."),
            .flag("--json", "Print one JSON object per event on stdout (see Docs/CLI.md)."),
            .flag("--verbose", "Show progress on stderr even when it is not a terminal."),
            CLIAuth.secretsOption,
            CLIAuth.codexHomeOption,
        ] + CLIMCPServers.options
    )

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        guard let parsed = parse(arguments) else { return Console.Status.usage }
        let options: SendOptions
        do {
            options = try SendOptions(parsed)
        } catch {
            return Console.usageFailure(error.message, help: help)
        }
        return await SendSession(options: options).run()
    }
}

/// The checked options of one `send`.
struct SendOptions {
    var prompt: String
    var images: [AgentImageAttachment]
    /// The reply's contract, from `--schema`.
    var format: AgentStructuredOutputFormat?
    var model: CodexModel?
    var effort: ReasoningEffort?
    var ephemeral: Bool
    var threadID: AgentThreadID?
    var database: String
    var endpoint: URL?
    var auth: ResponsesEnvironment.Source?
    var reasoningSummaries: Bool
    var json: Bool
    var verbose: Bool
    var store: URL
    var codexHome: String?
    /// The MCP servers whose tools the model may call.
    var mcp: CLIMCPServers

    /// The largest prompt read from standard input.
    static let maximumPromptBytes = 1 << 20

    init(_ parsed: ParsedArguments, standardInput: StandardInput = .current) throws(UsageError) {
        guard parsed.positionals.count <= 1 else { throw UsageError("Only one prompt may be given") }
        prompt = try Self.prompt(parsed.positionals.first, standardInput: standardInput)
        guard !prompt.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || !(parsed.lists["--image"] ?? []).isEmpty else {
            throw UsageError("the prompt is empty")
        }
        images = []
        for path in parsed.lists["--image"] ?? [] {
            let data: Data
            do {
                data = Data(try BoundedInputFile.readAll(path, limit: AgentImageAttachment.maximumByteCount))
            } catch {
                throw Self.fileError(error, what: "the image", limit: "50 MiB, the most an image may be")
            }
            guard let mimeType = AgentImageAttachment.completeImageMimeType(data) else {
                throw UsageError("\(path) is not a complete PNG, JPEG, GIF, WebP or HEIC image")
            }
            images.append(AgentImageAttachment(data: data, mimeType: mimeType))
        }
        if let path = parsed.options["--schema"] {
            let bytes: [UInt8]
            do {
                bytes = try Console.readInput(path, limit: Self.maximumPromptBytes)
            } catch {
                throw Self.fileError(error, what: "the schema", limit: "1 MiB, the most a schema may be")
            }
            guard let schema = try? JSONValue(parsing: bytes) else { throw UsageError("\(path) is not valid JSON") }
            let format = AgentStructuredOutputFormat(name: "codexctl_reply", rawSchema: schema)
            do {
                _ = try format.validator()
            } catch {
                throw UsageError("\(path) is not a schema CodexKit can enforce: \(error)")
            }
            self.format = format
        }
        model = parsed.options["--model"].map(CodexModel.init(rawValue:))
        if let effort = parsed.options["--effort"] {
            guard SendCommand.efforts.contains(effort) else {
                throw UsageError("--effort takes none, minimal, low, medium, high, xhigh, max or ultra")
            }
            self.effort = ReasoningEffort(rawValue: effort)
        }
        ephemeral = parsed.has("--ephemeral")
        threadID = parsed.options["--thread"].map(AgentThreadID.init(rawValue:))
        if ephemeral, threadID != nil || parsed.options["--db"] != nil {
            throw UsageError("--ephemeral keeps nothing: it cannot be combined with --thread or --db")
        }
        database = try CLIStorePaths.database(parsed.options["--db"], fallback: CLIStorePaths.stateDatabase())
        endpoint = try Self.endpoint(parsed.options["--endpoint"])
        auth = try Self.authSource(parsed.options["--auth"])
        reasoningSummaries = parsed.has("--reasoning-summaries")
        json = parsed.has("--json")
        verbose = parsed.has("--verbose")
        store = CLIAuth.storeDirectory(parsed.options["--secrets"])
        codexHome = parsed.options["--codex-home"]
        mcp = try CLIMCPServers(parsed)
    }

    /// What standard input is, as far as the prompt is concerned.
    enum StandardInput {
        /// A terminal: a person types, so it is never read for a prompt that was given.
        case terminal
        /// A pipe or a file: read to its end.
        case piped
        /// Closed, or something that is neither (a socket): not read.
        case none

        /// Standard input of this process.
        static var current: StandardInput {
            if isatty(STDIN_FILENO) == 1 { return .terminal }
            var info = stat()
            guard fstat(STDIN_FILENO, &info) == 0 else { return .none }
            switch info.st_mode & S_IFMT {
            case S_IFIFO, S_IFREG, S_IFCHR: return .piped
            default: return .none
            }
        }
    }

    /// The prompt, as the Codex CLI's `exec` takes it: the argument; `-`, or no argument with piped
    /// input, standard input; an argument with piped input, the argument followed by the input in a
    /// `<stdin>` block. Input that is empty or only whitespace adds nothing, so `/dev/null`, an empty pipe
    /// and a closed standard input change nothing and never fail.
    static func prompt(_ argument: String?, standardInput: StandardInput) throws(UsageError) -> String {
        switch argument {
        case "-"?:
            return try readStandardInput()
        case nil:
            guard standardInput == .piped else {
                throw UsageError("Missing expected argument '<prompt>' (give it, or pipe it on standard input)")
            }
            return try readStandardInput()
        case let prompt?:
            guard standardInput == .piped else { return prompt }
            let piped = try readStandardInput()
            guard !piped.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return prompt }
            return prompt + "\n\n<stdin>\n" + piped + (piped.hasSuffix("\n") ? "" : "\n") + "</stdin>"
        }
    }

    /// Standard input to its end, at most 1 MiB. A person at a terminal who left standard input open to
    /// a pipe that has nothing yet is told why the command waits.
    private static func readStandardInput() throws(UsageError) -> String {
        var ready = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        if isatty(STDERR_FILENO) == 1, poll(&ready, 1, 0) == 0 {
            Console.error("reading the prompt from standard input until it ends (give < /dev/null to send none)\n")
        }
        do {
            return String(decoding: try Console.readInput("-", limit: maximumPromptBytes), as: UTF8.self)
        } catch where failure(error, is: EBADF) {
            return ""
        } catch {
            throw UsageError("the prompt on standard input is unreadable or larger than 1 MiB")
        }
    }

    private static func failure(_ error: BoundedInputFile.Failure, is code: Int32) -> Bool {
        error.systemError == code
    }

    /// A usage error naming the file and the system's cause, or the limit a file passed.
    static func fileError(_ failure: BoundedInputFile.Failure, what: String, limit: String) -> UsageError {
        let reason = BoundedInputFile.Failure.reason(failure.systemError)
        switch failure.kind {
        case .tooLarge: return UsageError("\(what) \(failure.path) is larger than \(limit)")
        case .open: return UsageError("cannot open \(what) \(failure.path): \(reason)")
        case .read: return UsageError("cannot read \(what) \(failure.path): \(reason)")
        case .notRegularFile: return UsageError("\(what) \(failure.path) is not a regular file")
        }
    }

    /// `--endpoint`: an https URL, or http to a loopback address.
    static func endpoint(_ value: String?) throws(UsageError) -> URL? {
        guard let value else { return nil }
        guard let url = URL(string: value), url.scheme != nil else {
            throw UsageError("--endpoint must be an https URL (or http to a loopback address)")
        }
        do {
            try ResponsesEndpoint.validate(url)
        } catch {
            throw UsageError("--endpoint: \((error as? AgentRuntimeError)?.message ?? "not a valid endpoint")")
        }
        return url
    }

    /// `--auth`: apikey, codex or session.
    static func authSource(_ value: String?) throws(UsageError) -> ResponsesEnvironment.Source? {
        guard let value else { return nil }
        guard let source = ResponsesEnvironment.Source(rawValue: value) else { throw UsageError("--auth takes apikey, codex or session") }
        return source
    }
}
