import CodexCore
import CodexSchema
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// What a Codex CLI user types works the same way: `-m`, the prompt from standard input, `exec`,
/// `--output-schema`, `login` / `logout`; and every command finds the store `send` wrote.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct CodexHabitsTests {
    /// The text of the user message of a recorded Responses request.
    static func userText(_ request: RecordedRequest) throws -> String {
        let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
        let input = try #require(body["input"] as? [[String: Any]])
        let user = try #require(input.last { $0["role"] as? String == "user" })
        let content = try #require(user["content"] as? [[String: Any]])
        return content.compactMap { $0["text"] as? String }.joined()
    }

    static func model(_ request: RecordedRequest) throws -> String? {
        try (JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])?["model"] as? String
    }

    @Test func thePromptComesFromStandardInputOrIsFollowedByItAsTheCodexCLIDoes() async throws {
        let directory = try temporaryDirectory("habits")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: Array(repeating: .sse(SendCommandTests.reply(["Ok."])), count: 4))
        defer { server.shutdown() }
        let endpoint = server.baseURL.appendingPathComponent("v1").absoluteString
        let environment = SendCommandTests.environment(directory)
        // No prompt, piped input: the input is the prompt.
        let piped = try await CommandRunner.codexctl(["send", "--ephemeral", "--endpoint", endpoint], stdin: "What is 2+2?\n", environment: environment)
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stdout == "Ok.\n")
        // A prompt and piped input: the input follows in a <stdin> block.
        let both = try await CommandRunner.codexctl(["exec", "Summarize", "--ephemeral", "--endpoint", endpoint], stdin: "my output", environment: environment)
        #expect(both.status == 0, "\(both.stderr)")
        // A prompt with /dev/null, and with an empty pipe: nothing is added, nothing fails or waits.
        let null = try await CommandRunner.codexctl(["send", "Summarize", "--ephemeral", "--endpoint", endpoint, "-m", "gpt-x"], environment: environment)
        #expect(null.status == 0, "\(null.stderr)")
        let empty = try await CommandRunner.codexctl(["send", "Summarize", "--ephemeral", "--endpoint", endpoint], stdin: "  \n", environment: environment)
        #expect(empty.status == 0, "\(empty.stderr)")

        let texts = try server.requests.map(Self.userText)
        #expect(texts == ["What is 2+2?\n", "Summarize\n\n<stdin>\nmy output\n</stdin>", "Summarize", "Summarize"])
        #expect(try Self.model(server.requests[2]) == "gpt-x")
    }

    @Test func withATerminalAndNoPromptTheMissingPromptIsAUsageErrorAndTheAliasesParse() async throws {
        let directory = try temporaryDirectory("habits")
        defer { try? FileManager.default.removeItem(at: directory) }
        // --output-schema is --schema: the file is read (and found missing) as a schema.
        let schema = try await CommandRunner.codexctl(["send", "Hi", "--output-schema", "/no/such.json"], environment: SendCommandTests.environment(directory))
        #expect(schema.status == 64)
        #expect(schema.stderr.hasPrefix("Error: cannot open the schema /no/such.json: No such file or directory\n"), "\(schema.stderr)")
        let help = try await CommandRunner.codexctl(["help", "exec"])
        #expect(help.stdout.hasPrefix("OVERVIEW: The same as 'codexctl send'."))
        #expect(help.stdout.contains("--model <id>") && help.stdout.contains("gpt-5.6-sol). Also -m.\n"), "\(help.stdout)")
        #expect(help.stdout.contains("printed as one JSON value. Also --output-schema.\n"))
    }

    @Test func everyCommandFindsTheStoreSendWroteAndANewThreadIsNamedOnStandardError() async throws {
        let directory = try temporaryDirectory("habits")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply(["Stored."]))])
        defer { server.shutdown() }
        let environment = SendCommandTests.environment(directory)
        let sent = try await CommandRunner.codexctl(["send", "Keep this", "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString], environment: environment)
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stdout == "Stored.\n")
        let database = directory.appendingPathComponent("state/codexkit/state.sqlite").path
        let threads = try await SQLiteRuntimeStateStore(readingAt: database).threads()
        let thread = try #require(threads.first)
        #expect(sent.stderr == "thread \(thread.id.rawValue)\n")

        let path = try await CommandRunner.codexctl(["db", "path"], environment: environment)
        #expect(path.stdout == database + "\n")
        let listed = try await CommandRunner.codexctl(["threads", "list", "--json"], environment: environment)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains(thread.id.rawValue))
        let checked = try await CommandRunner.codexctl(["db", "check"], environment: environment)
        #expect(checked.status == 0, "\(checked.stderr)")
    }

    @Test func aURLOfAnotherKindIsRefusedWithoutEchoingItAndNothingIsCreated() async throws {
        let directory = try temporaryDirectory("habits")
        defer { try? FileManager.default.removeItem(at: directory) }
        var cases = [
            ["send", "Hi", "--db", "mysql://user:hunter2secret@h/db"], ["threads", "list", "--db", "file:///tmp/x.sqlite?password=hunter2secret"],
            ["db", "check", "--db", "sqlite:state.db"], ["chat", "--db", "mysql://user:hunter2secret@/db"],
        ]
        // Addresses without `//`, a PostgreSQL scheme without it, a URL after spaces, credentials without
        // a scheme: each would have become a file named after it, or been echoed in an error.
        for value in [
            "postgres:hunter2secret@host", "postgresql:hunter2secret", "postgresql:", "postgres:/u:hunter2secret@127.0.0.1:1/x",
            "redis:hunter2secret", "Http:hunter2secret", "mailto:a@b", "user:hunter2secret@db.example.com",
            "u:hunter2secret@host:5432/db", "jdbc:postgresql://u:hunter2secret@h/x", " postgres://u:hunter2secret@127.0.0.1:1/x",
        ] {
            cases.append(["db", "migrate", "--db", value])
            cases.append(["threads", "list", "--db", value])
        }
        for arguments in cases {
            let result = try await CommandRunner.codexctl(arguments, in: directory, environment: SendCommandTests.environment(directory))
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("Error: --db takes a SQLite file path or a PostgreSQL connection URL (postgres://… or postgresql://…); "), "\(result.stderr)")
            #expect(!result.stderr.contains("hunter2"))
            #expect(!result.stdout.contains("hunter2"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        // A file whose name starts with a word and a colon is reached as `./name`.
        let local = try await CommandRunner.codexctl(["db", "migrate", "--db", "./backup:1.sqlite"], in: directory, environment: SendCommandTests.environment(directory))
        #expect(local.status == 0, "\(local.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("backup:1.sqlite").path))
        // A name with a colon that is no scheme, credentials or `//` is a path as it stands.
        let stamped = try await CommandRunner.codexctl(
            ["db", "migrate", "--db", "backup-2026-12-06T10:00.sqlite"], in: directory, environment: SendCommandTests.environment(directory)
        )
        #expect(stamped.status == 0, "\(stamped.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("backup-2026-12-06T10:00.sqlite").path))
    }

    @Test func loginLogoutAndLoginStatusAreTheAuthCommands() async throws {
        let directory = try temporaryDirectory("habits")
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = SendCommandTests.environment(directory, apiKey: nil)
        let status = try await CommandRunner.codexctl(["login", "status"], environment: environment)
        let auth = try await CommandRunner.codexctl(["auth", "status"], environment: environment)
        #expect(status.status == 1)
        #expect(status.stdout == auth.stdout)
        #expect(status.stdout.hasPrefix("not signed in"))
        let saved = try await CommandRunner.codexctl(["login", "--with-api-key"], stdin: "sk-saved-key\n", environment: environment)
        #expect(saved.status == 0, "\(saved.stderr)")
        let after = try await CommandRunner.codexctl(["login", "status", "--json"], environment: environment)
        #expect(after.status == 0)
        #expect(after.stdout.contains(#""mode":"api-key""#))
        let logout = try await CommandRunner.codexctl(["logout"], environment: environment)
        #expect(logout.stdout == "signed out: the saved session and API key are removed\n")
        #expect(try await CommandRunner.codexctl(["login", "status"], environment: environment).status == 1)

        // A key that is not printable ASCII is refused, never saved changed or saved to fail later.
        for (name, bytes) in [
            ("not-utf8", [0xFF, 0xFE, 0x0A]), ("nul", Array("sk-a".utf8) + [0x00] + Array("b\n".utf8)),
            ("escape", Array("sk-".utf8) + [0x1B] + Array("[31mX\n".utf8)), ("bom", [0xEF, 0xBB, 0xBF] + Array("sk-key\n".utf8)),
        ] as [(String, [UInt8])] {
            let input = directory.appendingPathComponent(name)
            try Data(bytes).write(to: input)
            let refused = try await CommandRunner.codexctl(["login", "--with-api-key"], redirecting: "< '\(input.path)'", environment: environment)
            #expect(refused.status == 1, "\(name)")
            #expect(refused.stderr.hasPrefix("Error: api_key_unreadable: the API key on standard input "), "\(name): \(refused.stderr)")
            #expect(try await CommandRunner.codexctl(["login", "status"], environment: environment).status == 1, "\(name)")
        }
    }

    /// Each shell completes commands, options, an option's fixed values (never files after `--effort`),
    /// paths where a path goes (directories only where a directory goes, a name with a space as one
    /// word), nothing where a value is free, `help`'s command names, `completions`' shells and
    /// `login status`.
    @Test func completionScriptsForBashZshAndFishCompleteCommandsOptionsValuesAndFiles() async throws {
        let directory = try temporaryDirectory("completion")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("adir"), withIntermediateDirectories: true)
        for name in ["afile.json", "my file.json", "a:b.json", "-dash.json"] { try Data().write(to: directory.appendingPathComponent(name)) }
        let bash = try await CommandRunner.codexctl(["completions", "bash"])
        #expect(bash.status == 0)
        let script = try CommandRunner.temporaryFile(bash.stdout, name: "codexctl.bash")
        let completed = try await CommandRunner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", """
            source \(script)
            cd '\(directory.path)'
            complete() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _codexctl; printf '%s|' "${COMPREPLY[@]}"; echo; }
            complete codexctl thr
            complete codexctl threads l
            complete codexctl send -m gpt --out
            complete codexctl db ""
            complete codexctl send --effort h
            complete codexctl send --effort = x
            complete codexctl usage --by ""
            complete codexctl send -m ""
            complete codexctl help sch
            complete codexctl completions ""
            complete codexctl login ""
            complete codexctl schema check my
            complete codexctl schema conformance ""
            complete codexctl schema check a : b
            complete codexctl send --effort =
            complete codexctl send --model threads ""
            complete codexctl help threads ""
            complete codexctl login --secrets x status --j
            complete codexctl schema check ./-d
            """])
        #expect(completed.stdout == """
            threads|
            list|
            --output-schema|
            path|check|migrate|
            high|
            xhigh|
            thread|turn|account|model|day|
            |
            schema|
            bash|zsh|fish|
            status|
            my file.json|
            adir|
            b.json|
            none|minimal|low|medium|high|xhigh|max|ultra|
            |
            list|show|export|delete|
            |
            ./-dash.json|

            """, "\(completed.stderr)")
        for shell in ["zsh", "fish"] where FileManager.default.isExecutableFile(atPath: "/usr/bin/\(shell)") {
            let generated = try await CommandRunner.codexctl(["completions", shell])
            #expect(generated.status == 0)
            let file = try CommandRunner.temporaryFile(generated.stdout, name: "codexctl.\(shell)")
            let syntax = try await CommandRunner.run(URL(fileURLWithPath: "/usr/bin/\(shell)"), ["-n", file])
            #expect(syntax.status == 0, "\(shell): \(syntax.stderr)")
        }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/fish") {
            let fish = try await CommandRunner.codexctl(["completions", "fish"])
            let file = try CommandRunner.temporaryFile(fish.stdout, name: "codexctl.fish")
            let lines = [
                "codexctl threads ", "codexctl send --out", "codexctl send --effort ", "codexctl send --effort=h", "codexctl send -m ",
                "codexctl login ", "codexctl completions ", "codexctl schema check my", "codexctl schema conformance ", "codexctl help sch",
                "codexctl send --model gp", "codexctl threads show abc", "codexctl schema check ./-d", "codexctl send --image=af",
            ]
            let commands = lines.map { "echo (complete -C '\($0)' | string join ,)" }.joined(separator: "; ")
            let completed = try await CommandRunner.run(
                URL(fileURLWithPath: "/usr/bin/fish"), ["-c", "source \(file); cd '\(directory.path)'; \(commands)"]
            )
            #expect(completed.stdout == """
                delete,export,list,show
                --output-schema
                high,low,max,medium,minimal,none,ultra,xhigh
                --effort=high

                status
                bash,fish,zsh
                my file.json
                adir/\tDirectory
                schema


                ./-dash.json
                --image=afile.json

                """.replacingOccurrences(of: "\\t", with: "\t"), "\(completed.stderr)")
        }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh") {
            let zsh = try await CommandRunner.codexctl(["completions", "zsh"])
            let file = try CommandRunner.temporaryFile(zsh.stdout, name: "_codexctl")
            let completed = try await CommandRunner.run(URL(fileURLWithPath: "/usr/bin/zsh"), ["-c", """
                compdef() { :; }; compadd() { [[ $1 == -- ]] && shift; print -r -- "$*"; }; _files() { print -r -- "FILES $*"; }
                compset() { :; }
                source \(file)
                words=(codexctl threads ''); CURRENT=3; _codexctl
                words=(codexctl send --schema ''); CURRENT=4; _codexctl
                words=(codexctl send --effort ''); CURRENT=4; _codexctl
                words=(codexctl send --effort=h); CURRENT=3; _codexctl
                words=(codexctl send -m ''); CURRENT=4; _codexctl
                words=(codexctl help ''); CURRENT=3; _codexctl
                words=(codexctl completions ''); CURRENT=3; _codexctl
                words=(codexctl schema conformance ''); CURRENT=4; _codexctl
                words=(codexctl login ''); CURRENT=3; _codexctl
                """])
            #expect(completed.stdout == """
                list show export delete
                FILES\u{20}
                none minimal low medium high xhigh max ultra
                none minimal low medium high xhigh max ultra

                demo send exec chat schema responses models auth login logout recovery threads approvals mcp db memory usage bench completions errors
                bash zsh fish
                FILES -/
                status

                """, "\(completed.stderr)")
        }
    }

    @Test func modelsListReadsOpenAIBaseURLListsADataReplyAndSaysWhenItFallsBack() async throws {
        let directory = try temporaryDirectory("habits")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [
            .json(#"{"object":"list","data":[{"id":"gpt-x","object":"model"},{"id":"gpt-6-astra","object":"model"}]}"#),
            .json(#"{"error":{"message":"down"}}"#, status: 500),
        ])
        defer { server.shutdown() }
        var environment = SendCommandTests.environment(directory)
        environment["OPENAI_BASE_URL"] = server.baseURL.appendingPathComponent("v1").absoluteString
        let listed = try await CommandRunner.codexctl(["models", "list", "--json"], environment: environment)
        #expect(listed.status == 0, "\(listed.stderr)")
        let document = try JSONValue(parsing: Array(listed.stdout.utf8))
        #expect(document["source"] == "remote")
        #expect(document["models"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["gpt-6-astra", "gpt-x"])
        #expect(server.requests.first?.path == "/v1/models")
        // The service fails: the bundled catalog is shown, and the reason is said, not hidden.
        let fallback = try await CommandRunner.codexctl(["models", "list", "--base-url", server.baseURL.appendingPathComponent("v1").absoluteString], environment: environment)
        #expect(fallback.status == 0, "\(fallback.stderr)")
        #expect(fallback.stdout.hasPrefix("source: bundled\n"))
        #expect(fallback.stderr == "warning: the catalog could not be fetched (provider_error: HTTP 500: down (HTTP 500)); showing the bundled one\n")
        #expect(server.requests.count == 2)
    }

    @Test func aTransportFailureNamesTheServersSchemeHostAndPortButNoPath() async throws {
        let directory = try temporaryDirectory("habits")
        defer { try? FileManager.default.removeItem(at: directory) }
        // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
        let result = try await CommandRunner.codexctl(
            ["send", "Hi", "--ephemeral", "--endpoint", "http://127.0.0.1:9/secret-path/v1"], environment: SendCommandTests.environment(directory)
        )
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("Error: transport_failure: the connection to http://127.0.0.1:9 failed (curl error 7: "), "\(result.stderr)")
        #expect(!result.stderr.contains("secret-path"))
    }

    @Test func aClosedStandardInputAddsNothingAndABadBaseURLDoesNotStopCommandsThatNeedOnlyTheCredential() async throws {
        let directory = try temporaryDirectory("habits")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply(["Closed."]))])
        defer { server.shutdown() }
        let closed = try await CommandRunner.codexctl(
            ["send", "Hi", "--ephemeral", "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString], redirecting: "<&-",
            environment: SendCommandTests.environment(directory)
        )
        #expect(closed.status == 0, "\(closed.stderr)")
        #expect(try Self.userText(try #require(server.requests.first)) == "Hi")
        // OPENAI_BASE_URL is checked where the endpoint is used, not where only the credential is.
        var environment = SendCommandTests.environment(directory)
        environment["OPENAI_BASE_URL"] = "http://proxy.example:4000/v1"
        let status = try await CommandRunner.codexctl(["auth", "status", "--json"], environment: environment)
        #expect(status.status == 0)
        #expect(status.stdout.contains(#""binding":"api-key:"#), "\(status.stdout)")
        let cached = try await CommandRunner.codexctl(["models", "list", "--cached-only", "--json"], environment: environment)
        #expect(cached.status == 0, "\(cached.stdout) \(cached.stderr)")
        let send = try await CommandRunner.codexctl(["send", "Hi", "--ephemeral"], environment: environment)
        #expect(send.status == 1)
        #expect(send.stderr.hasPrefix("Error: invalid_endpoint: OPENAI_BASE_URL: the endpoint must use https"), "\(send.stderr)")
    }
}
