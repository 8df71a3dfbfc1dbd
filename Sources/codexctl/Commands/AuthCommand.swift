import CodexCore
import CodexSchema
import CodexTransport
import Foundation

/// `codexctl auth`: sign-in state and device-code sign-in.
enum AuthCommand: CLICommand {
    static let name = "auth"
    static let summary = "Show the sign-in state; sign in with a device code or an API key; sign out."
    static let help = CommandHelp(
        command: "auth",
        overview: "Show the sign-in state, or sign in to a ChatGPT account with a device code.",
        subcommands: subcommandRows
    )
    static var subcommands: [any CLICommand.Type] { [AuthStatusCommand.self, AuthLoginCommand.self, AuthLogoutCommand.self] }

    static func run(_ arguments: [String]) async -> Int32 { await dispatch(arguments) }
}

/// `codexctl auth status`.
enum AuthStatusCommand: CLICommand {
    static let name = "status"
    static let summary = "Show which credentials CodexKit would use (never the tokens)."
    static let help = CommandHelp(
        command: "auth status",
        overview: """
        Show the credentials codexctl would use (every command, in this order): OPENAI_API_KEY, else the Codex CLI's \
        auth.json, else the API key CodexKit saved, else its saved ChatGPT session. Prints the account, plan and expiry, and the account binding 'codexctl recovery' commands act for, \
        never a token. A key is reported as not verified (nothing is sent to check it). Exit status 0 when signed in, 1 when not.
        """,
        options: [
            .flag("--json", "Print one JSON object."),
            CLIAuth.secretsOption,
            CLIAuth.codexHomeOption,
        ]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        guard let parsed = parse(arguments, validate: { try $0.expectNoPositionals() }) else { return Console.Status.usage }
        let source: CLIAuth.Source?
        do {
            source = try CLIAuth.source(store: CLIAuth.storeDirectory(parsed.options["--secrets"]), codexHome: parsed.options["--codex-home"])
        } catch {
            CLIFailure(error).report(json: parsed.has("--json"))
            return Console.Status.failure
        }
        var status: JSONObject = ["signed_in": .bool(source != nil)]
        switch source {
        case .savedSession(let session)?:
            status["source"] = "codexkit"
            describe(session, into: &status)
        case .codexCLI(.chatGPT(let session))?:
            status["source"] = "codex-cli"
            describe(session, into: &status)
        case .savedAPIKey?:
            status["source"] = "codexkit"
            status["mode"] = "api-key"
            status["verified"] = false
        case .codexCLI(.apiKey)?:
            status["source"] = "codex-cli"
            status["mode"] = "api-key"
            status["verified"] = false
        case .apiKey?:
            status["source"] = "environment"
            status["mode"] = "api-key"
            status["verified"] = false
        case nil:
            break
        }
        // The binding `codexctl recovery` commands act for: the same provider they build.
        if source != nil, let provider = try? CLIAuth.provider(
            store: CLIAuth.storeDirectory(parsed.options["--secrets"]), codexHome: parsed.options["--codex-home"], http: DefaultHTTPClient(), readOnly: true
        ), let binding = await provider.currentBinding() {
            status["binding"] = .string(binding)
        }
        if parsed.has("--json") {
            Console.exactLine(JSONValue.object(status).compactString())
        } else if source == nil {
            Console.line("not signed in (run 'codexctl auth login --device-code', sign in with the Codex CLI, or set OPENAI_API_KEY)")
        } else {
            // A key is not checked against the service here: say so rather than "signed in".
            let verb = status["verified"] == .bool(false) ? "API key found (not verified)" : "signed in"
            // Claims come from auth.json and the tokens' payloads: each is escaped as a one-line field.
            var line = "\(verb) via \(status["source"]?.stringValue ?? "?"): \(status["mode"]?.stringValue ?? "chatgpt")"
            if let account = status["account_id"]?.stringValue { line += ", account \(Console.display(account))" }
            if let plan = status["plan"]?.stringValue { line += ", plan \(Console.display(plan))" }
            if let email = status["email"]?.stringValue { line += ", e-mail \(Console.display(email))" }
            if let expires = status["expires_at"]?.stringValue {
                // A token past its date is renewed on first use (a saved session), or by the Codex CLI.
                line += status["expired"] == .bool(true) ? ", token expired \(expires)" : ", token expires \(expires)"
            }
            Console.line(line)
            if let binding = status["binding"]?.stringValue { Console.line("recovery commands act for binding \(Console.display(binding))") }
        }
        return source == nil ? Console.Status.failure : Console.Status.success
    }

    private static func describe(_ session: ChatGPTSession, into status: inout JSONObject) {
        status["mode"] = "chatgpt"
        status["account_id"] = .string(session.accountID)
        status["plan"] = session.planType.map(JSONValue.string) ?? .null
        status["email"] = session.email.map(JSONValue.string) ?? .null
        status["expires_at"] = session.expiresAt.map { .string(ISO8601DateFormatter().string(from: $0)) } ?? .null
        status["expired"] = session.expiresAt.map { .bool($0 <= Date()) } ?? .null
    }
}

/// `codexctl auth login --device-code`.
enum AuthLoginCommand: CLICommand {
    static let name = "login"
    static let summary = "Sign in with a device code, or save an API key read from standard input."
    static let help = CommandHelp(
        command: "auth login",
        overview: """
        Sign in to a ChatGPT account with a device code and save the session in CodexKit's secret store, or save an \
        API key read from standard input (never from the command line, where other users could see it).
        """,
        options: [
            .flag("--device-code", "Use the device-code flow."),
            .flag("--with-api-key", "Read an API key from standard input and save it (mode 0600)."),
            .value("--issuer", "url", "The OAuth issuer (default https://auth.openai.com)."),
            CLIAuth.secretsOption,
        ]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        guard let parsed = parse(arguments) else { return Console.Status.usage }
        guard parsed.has("--device-code") != parsed.has("--with-api-key") else {
            return Console.usageFailure("Give exactly one of '--device-code' and '--with-api-key'", help: help)
        }
        // Not echoed: a stray argument here is most often the key itself, and errors end up in logs.
        guard parsed.positionals.isEmpty else {
            return Console.usageFailure("login takes no argument (the key is read from standard input; the argument is not shown)", help: help)
        }
        if parsed.has("--with-api-key") { return saveAPIKey(store: CLIAuth.storeDirectory(parsed.options["--secrets"])) }
        // A bad issuer is a usage error found before anything is sent, as a bad --endpoint is.
        let issuer: AuthIssuer
        do {
            issuer = try parsed.options["--issuer"].map { try AuthIssuer(baseURL: URL(string: $0) ?? URL(fileURLWithPath: $0)) } ?? .openAI
        } catch {
            return Console.usageFailure("--issuer: \((error as? AgentRuntimeError)?.message ?? "not a usable issuer URL")", help: help)
        }
        do {
            let store = ChatGPTSessionStore(store: try FileSecureStore(directory: CLIAuth.storeDirectory(parsed.options["--secrets"])))
            let signIn = DeviceCodeSignIn(issuer: issuer, httpClient: DefaultHTTPClient())
            let code = try await signIn.requestCode()
            Console.line("Open \(Console.display(code.verificationURL.absoluteString)) and enter the code \(Console.display(code.userCode))")
            Console.error("Waiting for approval (up to 15 minutes)…\n")
            let session = try await signIn.waitForApproval(code)
            try store.save(session)
            Console.line("Signed in: account \(Console.display(session.accountID)), plan \(Console.display(session.planType ?? "unknown"))")
            return Console.Status.success
        } catch {
            CLIFailure(error).report(json: false)
            return Console.Status.failure
        }
    }
}

extension AuthLoginCommand {
    /// Reads one key from standard input (at most 4 KiB, surrounding whitespace dropped; printable ASCII
    /// only) and saves it.
    static func saveAPIKey(store: URL) -> Int32 {
        // Typed at a terminal the key would be echoed on the screen (and into a recording of it): it is
        // piped in, as the Codex CLI asks.
        guard isatty(0) == 0 else {
            CLIFailure(
                code: "api_key_missing", message: "standard input is a terminal: pipe the key in, e.g. printenv OPENAI_API_KEY | codexctl login --with-api-key"
            ).report(json: false)
            return Console.Status.failure
        }
        guard let bytes = try? Console.readInput("-", limit: 4096) else {
            CLIFailure(code: "api_key_unreadable", message: "the API key on standard input is unreadable or longer than 4 KiB").report(json: false)
            return Console.Status.failure
        }
        // A key is printable ASCII: anything else (bytes that are not UTF-8, a NUL, an escape sequence, a
        // byte-order mark) would be saved changed or sent as a header that cannot work.
        guard let text = String(validating: bytes, as: UTF8.self) else {
            CLIFailure(code: "api_key_unreadable", message: "the API key on standard input is not text (it is not UTF-8)").report(json: false)
            return Console.Status.failure
        }
        let key = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !key.isEmpty, !key.contains(where: \.isWhitespace) else {
            CLIFailure(code: "api_key_missing", message: "standard input holds no API key (one line, no spaces)").report(json: false)
            return Console.Status.failure
        }
        guard key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            CLIFailure(code: "api_key_unreadable", message: "the API key on standard input has a character an API key never has (a control character or a non-ASCII one)")
                .report(json: false)
            return Console.Status.failure
        }
        do {
            try FileSecureStore(directory: store).save(Array(key.utf8), for: CLIAuth.apiKeyEntry)
        } catch {
            let failure = error as? AgentRuntimeError
            Console.error("Error: \(failure?.code.rawValue ?? "secure_store_failure"): cannot save the key in \(store.path): \(failure?.message ?? "storage failure")\n")
            return Console.Status.failure
        }
        Console.line("API key saved (not verified: it is checked on first use)")
        return Console.Status.success
    }
}

/// `codexctl auth logout`.
enum AuthLogoutCommand: CLICommand {
    static let name = "logout"
    static let summary = "Remove the session and the API key CodexKit saved."
    static let help = CommandHelp(
        command: "auth logout",
        overview: "Remove the ChatGPT session and the API key CodexKit saved. The Codex CLI's auth.json and OPENAI_API_KEY are left alone.",
        options: [CLIAuth.secretsOption]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        guard let parsed = parse(arguments, validate: { try $0.expectNoPositionals() }) else { return Console.Status.usage }
        let store = CLIAuth.storeDirectory(parsed.options["--secrets"])
        guard FileManager.default.fileExists(atPath: store.path) else {
            Console.line("nothing saved")
            return Console.Status.success
        }
        do {
            let secrets = try FileSecureStore(directory: store)
            // Whatever is there goes, readable or not: a key left group-readable, a session cut short,
            // a file too large are exactly what signing out must remove.
            func present(_ read: () throws -> Bool) -> Bool { (try? read()) ?? true }
            let sessionKey = ChatGPTSessionStore(store: secrets).key
            let leftovers = ((try? FileManager.default.contentsOfDirectory(atPath: store.path)) ?? []).contains { name in
                FileSecureStore.isLeftover(name, of: CLIAuth.apiKeyEntry) || FileSecureStore.isLeftover(name, of: sessionKey)
            }
            let had = leftovers || present { try secrets.load(CLIAuth.apiKeyEntry) != nil } || present { try ChatGPTSessionStore(store: secrets).load() != nil }
            try secrets.delete(CLIAuth.apiKeyEntry)
            try ChatGPTSessionStore(store: secrets).delete()
            Console.line(had ? "signed out: the saved session and API key are removed" : "nothing saved")
            return Console.Status.success
        } catch {
            let failure = error as? AgentRuntimeError
            Console.error("Error: \(failure?.code.rawValue ?? "secure_store_failure"): cannot update \(store.path): \(failure?.message ?? "storage failure")\n")
            return Console.Status.failure
        }
    }
}
