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
        arguments: [("<prompt> | -", "The prompt; '-' reads it from standard input (at most 1 MiB).")],
        argumentSynopsis: "(<prompt> | -)",
        options: [
            .value("--model", "id", "The model (default: the thread's, else gpt-5.6-sol)."),
            .value("--effort", "effort", "The reasoning effort: none, minimal, low, medium, high, xhigh, max, ultra."),
            .value("--image", "file", "An image sent with the prompt (PNG, JPEG, GIF, WebP, HEIC).", repeatable: true),
            .value("--schema", "file", "A JSON Schema the reply must match: validated locally, printed as one JSON value."),
            .flag("--ephemeral", "Keep nothing: no database is opened or written."),
            .value("--thread", "id", "Continue this thread of the database."),
            .value("--db", "path", "The state database (default $XDG_STATE_HOME/codexkit/state.sqlite, else ~/.local/state/codexkit/state.sqlite)."),
            .value("--endpoint", "url", "The Responses base URL (default: chosen by the credential)."),
            .value("--auth", "source", "Use only this credential: apikey, codex or session."),
            .flag("--reasoning-summaries", "Ask the model for reasoning summaries (shown on stderr)."),
            .flag("--json", "Print one JSON object per event on stdout (see Docs/CLI.md)."),
            .flag("--verbose", "Show progress on stderr even when it is not a terminal."),
            CLIAuth.secretsOption,
            CLIAuth.codexHomeOption,
        ]
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
    enum AuthSource: String {
        case apikey, codex, session
    }

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
    var auth: AuthSource?
    var reasoningSummaries: Bool
    var json: Bool
    var verbose: Bool
    var store: URL
    var codexHome: String?

    /// The largest prompt read from standard input.
    static let maximumPromptBytes = 1 << 20

    init(_ parsed: ParsedArguments) throws(UsageError) {
        guard parsed.positionals.count == 1, let argument = parsed.positionals.first else {
            throw UsageError(parsed.positionals.isEmpty ? "Missing expected argument '<prompt>'" : "Only one prompt may be given")
        }
        if argument == "-" {
            guard let bytes = try? Console.readInput("-", limit: Self.maximumPromptBytes) else {
                throw UsageError("the prompt on standard input is unreadable or larger than 1 MiB")
            }
            prompt = String(decoding: bytes, as: UTF8.self)
        } else {
            prompt = argument
        }
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
            guard ["none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra"].contains(effort) else {
                throw UsageError("--effort takes none, minimal, low, medium, high, xhigh, max or ultra")
            }
            self.effort = ReasoningEffort(rawValue: effort)
        }
        ephemeral = parsed.has("--ephemeral")
        threadID = parsed.options["--thread"].map(AgentThreadID.init(rawValue:))
        if ephemeral, threadID != nil || parsed.options["--db"] != nil {
            throw UsageError("--ephemeral keeps nothing: it cannot be combined with --thread or --db")
        }
        database = parsed.options["--db"] ?? Self.defaultDatabase()
        endpoint = try Self.endpoint(parsed.options["--endpoint"])
        auth = try Self.authSource(parsed.options["--auth"])
        reasoningSummaries = parsed.has("--reasoning-summaries")
        json = parsed.has("--json")
        verbose = parsed.has("--verbose")
        store = CLIAuth.storeDirectory(parsed.options["--secrets"])
        codexHome = parsed.options["--codex-home"]
    }

    /// A usage error naming the file and the system's cause, or the limit a file passed.
    static func fileError(_ failure: BoundedInputFile.Failure, what: String, limit: String) -> UsageError {
        let reason = BoundedInputFile.Failure.reason(failure.systemError)
        switch failure.kind {
        case .tooLarge: return UsageError("\(what) \(failure.path) is larger than \(limit)")
        case .open: return UsageError("cannot open \(what) \(failure.path): \(reason)")
        case .read: return UsageError("cannot read \(what) \(failure.path): \(reason)")
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
    static func authSource(_ value: String?) throws(UsageError) -> AuthSource? {
        guard let value else { return nil }
        guard let source = AuthSource(rawValue: value) else { throw UsageError("--auth takes apikey, codex or session") }
        return source
    }

    /// `$XDG_STATE_HOME/codexkit/state.sqlite`, else `~/.local/state/codexkit/state.sqlite`. A relative
    /// `XDG_STATE_HOME` is ignored, as the XDG Base Directory specification says (a store must not
    /// depend on the directory a command happens to run in).
    static func defaultDatabase(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let state = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.local/state")
        return state + "/codexkit/state.sqlite"
    }
}
