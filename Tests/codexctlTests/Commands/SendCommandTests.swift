import CodexCore
import CodexSchema
import CodexStorageSQLite
import CodexTransport
import CodexTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `codexctl send` as a user runs it: the built binary against a loopback Responses server.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct SendCommandTests {
    static func event(_ json: String) -> String { "data: \(json)\n\n" }

    /// A reply streaming `parts` as deltas, then the message and completion.
    static func reply(_ parts: [String]) -> [String] {
        let text = parts.joined()
        var events = [event(#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress"}}"#)]
        for (index, part) in parts.enumerated() {
            events.append(event(#"{"type":"response.output_text.delta","sequence_number":\#(index + 1),"item_id":"msg_1","output_index":0,"content_index":0,"delta":"\#(part)"}"#))
        }
        events.append(event(#"{"type":"response.output_item.done","sequence_number":90,"output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","status":"completed","phase":"final_answer","content":[{"type":"output_text","text":"\#(text)"}]}}"#))
        events.append(event(#"{"type":"response.completed","sequence_number":91,"response":{"id":"resp_1","status":"completed","usage":{"input_tokens":7,"output_tokens":3,"total_tokens":10}}}"#))
        return events
    }

    /// An environment with only the credentials a test gives.
    static func environment(_ directory: URL, apiKey: String? = "sk-test") -> [String: String] {
        [
            "OPENAI_API_KEY": apiKey ?? "", "CODEX_HOME": directory.appendingPathComponent("codex-home").path,
            "CODEXKIT_HOME": directory.appendingPathComponent("codexkit").path, "XDG_STATE_HOME": directory.appendingPathComponent("state").path,
            "OPENAI_BASE_URL": "", "OPENAI_ORG_ID": "", "OPENAI_ORGANIZATION": "", "OPENAI_PROJECT_ID": "", "OPENAI_PROJECT": "",
        ]
    }

    @Test func aReplyStreamsToStdoutAndTheThreadContinuesWithItsHistory() async throws {
        let directory = try temporaryDirectory("send")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [.sse(Self.reply(["Hello ", "there."])), .sse(Self.reply(["Again."]))])
        defer { server.shutdown() }
        let database = directory.appendingPathComponent("state.sqlite").path
        let endpoint = server.baseURL.appendingPathComponent("v1").absoluteString
        let first = try await CommandRunner.codexctl(
            ["send", "Say hello", "--endpoint", endpoint, "--db", database, "--json"], environment: Self.environment(directory)
        )
        #expect(first.status == 0, "\(first.stderr)")
        let events = first.stdout.split(separator: "\n").map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
        }
        #expect(events.compactMap { $0["type"] as? String } == ["turn_started", "text_delta", "text_delta", "message_completed", "turn_completed"])
        #expect(events.compactMap { $0["text"] as? String } == ["Hello ", "there."])
        let threadID = try #require(events.last?["thread_id"] as? String)
        let request = try #require(server.requests.first)
        #expect(request.path == "/v1/responses")
        #expect(request.header("authorization") == "Bearer sk-test")
        #expect(request.header("openai-organization") == nil)
        #expect(request.header("openai-project") == nil)

        let second = try await CommandRunner.codexctl(
            ["send", "Once more", "--endpoint", endpoint, "--db", database, "--thread", threadID], environment: Self.environment(directory)
        )
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout == "Again.\n")
        #expect(second.stderr.isEmpty, "progress stays off a non-terminal stderr")
        let replayed = String(decoding: try #require(server.requests.last?.body), as: UTF8.self)
        #expect(replayed.contains("Say hello") && replayed.contains("Hello there.") && replayed.contains("Once more"))

        let store = try SQLiteRuntimeStateStore(readingAt: database)
        let history = try await store.history(of: AgentThreadID(rawValue: threadID), query: AgentHistoryQuery(limit: 100)).items
        let messages = history.compactMap { item -> String? in
            if case .message(let message) = item { return "\(message.role.rawValue): \(message.text)" }
            return nil
        }
        #expect(messages == ["user: Say hello", "assistant: Hello there.", "user: Once more", "assistant: Again."])
    }

    @Test func theOrganizationAndProjectVariablesBecomeHeaders() async throws {
        let directory = try temporaryDirectory("send")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [.sse(Self.reply(["Scoped."]))])
        defer { server.shutdown() }
        var environment = Self.environment(directory)
        environment["OPENAI_ORGANIZATION"] = "org-fallback"
        environment["OPENAI_PROJECT_ID"] = "proj-7"
        let result = try await CommandRunner.codexctl(
            ["send", "Hi", "--ephemeral", "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString], environment: environment
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(server.requests.first?.header("openai-organization") == "org-fallback")
        #expect(server.requests.first?.header("openai-project") == "proj-7")
    }

    @Test func failuresPrintTheCodeAndAHintAndNeverTheKey() async throws {
        let directory = try temporaryDirectory("send")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [.json(#"{"error":{"message":"bad key sk-canary-9f3","type":"invalid_request_error","code":"invalid_api_key"}}"#, status: 401)])
        defer { server.shutdown() }
        let rejected = try await CommandRunner.codexctl(
            ["send", "Hi", "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString, "--ephemeral"],
            environment: Self.environment(directory, apiKey: "sk-canary-9f3")
        )
        #expect(rejected.status == 1)
        #expect(rejected.stderr.hasPrefix("Error: unauthorized: "))
        #expect(rejected.stderr.contains("\nhint: sign in: set OPENAI_API_KEY"))
        #expect(!rejected.stderr.contains("sk-canary-9f3") && !rejected.stdout.contains("sk-canary-9f3"), "the key is never printed")
        // With --json, the last event carries the same hint as a field.
        let jsonServer = try LoopbackHTTPServer(replies: [.json(#"{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}"#, status: 401)])
        defer { jsonServer.shutdown() }
        let asJSON = try await CommandRunner.codexctl(
            ["send", "Hi", "--json", "--endpoint", jsonServer.baseURL.appendingPathComponent("v1").absoluteString, "--ephemeral"],
            environment: Self.environment(directory, apiKey: "sk-canary-9f3")
        )
        #expect(asJSON.status == 1)
        let last = try JSONValue(parsing: Array((asJSON.stdout.split(separator: "\n").last ?? "").utf8))
        #expect(last["type"] == "error")
        #expect(last["error"]?["code"] == "unauthorized")
        #expect(last["hint"]?.stringValue?.hasPrefix("sign in: set OPENAI_API_KEY") == true, "\(asJSON.stdout)")

        let nobody = try await CommandRunner.codexctl(["send", "Hi", "--ephemeral"], environment: Self.environment(directory, apiKey: nil))
        #expect(nobody.status == 1)
        #expect(nobody.stderr.hasPrefix("Error: not_signed_in: "))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [], "--ephemeral writes nothing anywhere")
    }

    @Test func usageErrorsAreFoundBeforeAnythingHappens() async throws {
        let directory = try temporaryDirectory("send")
        defer { try? FileManager.default.removeItem(at: directory) }
        for arguments in [
            ["send"], ["send", "a", "b"], ["send", "Hi", "--effort", "turbo"], ["send", "Hi", "--ephemeral", "--thread", "t"],
            ["send", "Hi", "--model", "a", "--model", "b"], ["send", "Hi", "--auth", "magic"], ["send", "Hi", "--endpoint", "ftp://127.0.0.1:9/v1"], ["send", "Hi", "--image", "/no/such.png"],
        ] {
            let result = try await CommandRunner.codexctl(arguments, environment: Self.environment(directory))
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("Error: "))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        let help = try await CommandRunner.codexctl(["help", "send"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: codexctl send [<prompt> | -]"))
    }

    /// A name that only looks like loopback is refused by its spelling, from the flag and from
    /// `OPENAI_BASE_URL`, before anything is stored or looked up.
    @Test func anHTTPEndpointThatIsNotLoopbackIsRefusedNamingTheRule() async throws {
        let directory = try temporaryDirectory("send")
        defer { try? FileManager.default.removeItem(at: directory) }
        let flag = try await CommandRunner.codexctl(["send", "Hi", "--endpoint", "http://127.attacker.invalid/v1"], environment: Self.environment(directory))
        #expect(flag.status == 64)
        #expect(flag.stderr.hasPrefix("Error: --endpoint: the endpoint must use https; plain http is allowed only to a loopback address (an IPv4 literal in 127.0.0.0/8, [::1]) or the name localhost\nUsage: codexctl send"))
        var environment = Self.environment(directory)
        environment["OPENAI_BASE_URL"] = "http://127.attacker.invalid/v1"
        let variable = try await CommandRunner.codexctl(["send", "Hi", "--ephemeral"], environment: environment)
        #expect(variable.status == 1, "\(variable.stderr)")
        #expect(variable.stderr.contains("plain http is allowed only to a loopback address"), "\(variable.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func ctrlCInterruptsTheTurnRecordsItAndExits130() async throws {
        let directory = try temporaryDirectory("send")
        defer { try? FileManager.default.removeItem(at: directory) }
        let head = [Self.event(#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress"}}"#),
                    Self.event(#"{"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Partial"}"#)]
        let held = ScriptedReply(headers: [.init(name: "Content-Type", value: "text/event-stream")], parts: [.bytes(Array(head.joined().utf8)), .hold], framing: .chunked)
        let server = try LoopbackHTTPServer(replies: [held])
        defer { server.shutdown() }
        let database = directory.appendingPathComponent("state.sqlite").path
        // stdout goes to a file the test can watch, so Ctrl-C comes once the partial reply is on screen.
        let screen = directory.appendingPathComponent("stdout.txt")
        let codexctl = CommandRunner.productsDirectory.appendingPathComponent("codexctl").path
        let result = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", #"exec "$0" "$@" > "$SCREEN""#, codexctl, "send", "Write a long essay",
             "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString, "--db", database],
            environment: Self.environment(directory).merging(["SCREEN": screen.path]) { $1 }
        ) { pid in
            for _ in 0..<60_000 {
                if let shown = try? String(contentsOf: screen, encoding: .utf8), shown.contains("Partial") { break }
                try? await Task.sleep(for: .milliseconds(1))
            }
            kill(pid, SIGINT)
        }
        #expect(result.status == 130, "\(result.stderr)")
        #expect(!result.killed)
        #expect(try String(contentsOf: screen, encoding: .utf8) == "Partial\n")
        let store = try SQLiteRuntimeStateStore(readingAt: database)
        let thread = try #require(try await store.threads().first)
        #expect(result.stderr == "thread \(thread.id.rawValue)\ninterrupted\n")
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard), "the connection was closed")
        #expect(try await store.latestTurn(of: thread.id)?.status == .interrupted)
        #expect(thread.status == .idle)
    }

    @Test func aSchemaReplyIsValidatedLocallyAndPrintedAsOneJSONValue() async throws {
        let directory = try temporaryDirectory("send")
        defer { try? FileManager.default.removeItem(at: directory) }
        let schema = directory.appendingPathComponent("verdict.schema.json")
        try Data(#"{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}"#.utf8).write(to: schema)
        let server = try LoopbackHTTPServer(replies: [.sse(Self.reply([#"{\"ok\": true}"#])), .sse(Self.reply([#"{\"ok\":\"yes\"}"#]))])
        defer { server.shutdown() }
        let arguments = ["send", "Decide.", "--ephemeral", "--schema", schema.path, "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString]
        let valid = try await CommandRunner.codexctl(arguments, environment: Self.environment(directory))
        #expect(valid.status == 0, "\(valid.stderr)")
        #expect(valid.stdout == #"{"ok":true}"# + "\n")
        let body = String(decoding: try #require(server.requests.first?.body), as: UTF8.self)
        #expect(body.contains(#""format":{"name":"codexctl_reply""#) && body.contains(#""type":"json_schema""#))
        let invalid = try await CommandRunner.codexctl(arguments, environment: Self.environment(directory))
        #expect(invalid.status == 1)
        #expect(invalid.stdout.isEmpty)
        #expect(invalid.stderr.hasPrefix("Error: structured_output_invalid: "))
        try Data("not json".utf8).write(to: schema)
        let unreadable = try await CommandRunner.codexctl(arguments, environment: Self.environment(directory))
        #expect(unreadable.status == 64)
        #expect(server.requests.count == 2)
    }
}

/// `auth login --with-api-key`, `auth status` and `auth logout` around a key kept in CodexKit's store.
@Suite struct AuthKeyCommandTests {
    @Test func aKeySavedFromStandardInputIsUsedUntilLogout() async throws {
        let directory = try temporaryDirectory("auth-key")
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = SendCommandTests.environment(directory, apiKey: nil)
        let store = directory.appendingPathComponent("codexkit/secrets")
        let saved = try await CommandRunner.codexctl(["auth", "login", "--with-api-key"], stdin: "  sk-saved-canary-7\n", environment: environment)
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(saved.stdout == "API key saved (not verified: it is checked on first use)\n")
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: store.path).first { $0.contains("openai-api-key") })
        let mode = try FileManager.default.attributesOfItem(atPath: store.appendingPathComponent(file).path)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let status = try await CommandRunner.codexctl(["auth", "status"], environment: environment)
        #expect(status.status == 0)
        #expect(status.stdout.hasPrefix("API key found (not verified) via codexkit: api-key\nrecovery commands act for binding api-key:"))
        #expect(status.stdout.split(separator: "\n").count == 2)
        #expect(!status.stdout.contains("sk-saved-canary-7"))

        let server = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply(["Keyed."]))])
        defer { server.shutdown() }
        let sent = try await CommandRunner.codexctl(
            ["send", "Hi", "--ephemeral", "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString], environment: environment
        )
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(server.requests.first?.header("authorization") == "Bearer sk-saved-canary-7")

        let out = try await CommandRunner.codexctl(["auth", "logout"], environment: environment)
        #expect(out.stdout == "signed out: the saved session and API key are removed\n")
        let after = try await CommandRunner.codexctl(["auth", "status"], environment: environment)
        #expect(after.status == 1)
        let again = try await CommandRunner.codexctl(["auth", "logout"], environment: environment)
        #expect(again.stdout == "nothing saved\n")
        let empty = try await CommandRunner.codexctl(["auth", "login", "--with-api-key"], stdin: "\n", environment: environment)
        #expect(empty.status == 1)
        #expect(empty.stderr.hasPrefix("Error: api_key_missing: "))
        let both = try await CommandRunner.codexctl(["auth", "login", "--with-api-key", "--device-code"], environment: environment)
        #expect(both.status == 64)
    }
}

/// `send` with each ChatGPT credential source: the Codex CLI's auth.json and a session CodexKit saved.
@Suite struct SendCredentialSourceTests {
    @Test func theCodexCLIsAuthFileAndASavedSessionGoToTheChatGPTBackend() async throws {
        let directory = try temporaryDirectory("send-sources")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply(["From the CLI file."])), .sse(SendCommandTests.reply(["From the store."]))])
        defer { server.shutdown() }
        let endpoint = server.baseURL.appendingPathComponent("backend-api/codex").absoluteString
        var environment = SendCommandTests.environment(directory, apiKey: nil)

        // The Codex CLI's auth.json, read and never rewritten.
        let codexHome = directory.appendingPathComponent("codex-home")
        try FileManager.default.createDirectory(at: codexHome, withIntermediateDirectories: true)
        let fileToken = TestJWT.accessToken(expiresAt: 4_000_000_000, marker: "cli-file")
        let authFile = codexHome.appendingPathComponent("auth.json")
        let contents = #"{"tokens":{"id_token":"\#(TestJWT.idToken(account: "acct-cli"))","access_token":"\#(fileToken)","refresh_token":"rt-cli","account_id":"acct-cli"}}"#
        try Data(contents.utf8).write(to: authFile)
        let viaFile = try await CommandRunner.codexctl(["send", "Hi", "--ephemeral", "--endpoint", endpoint], environment: environment)
        #expect(viaFile.status == 0, "\(viaFile.stderr)")
        #expect(viaFile.stdout == "From the CLI file.\n")
        #expect(server.requests.first?.path == "/backend-api/codex/responses")
        #expect(server.requests.first?.header("authorization") == "Bearer \(fileToken)")
        #expect(server.requests.first?.header("chatgpt-account-id") == "acct-cli")
        #expect(try String(contentsOf: authFile, encoding: .utf8) == contents, "auth.json is never rewritten")

        // A session CodexKit saved, picked with --auth session (the auth.json above is still there).
        let store = directory.appendingPathComponent("codexkit/secrets")
        let storeToken = TestJWT.accessToken(expiresAt: 4_000_000_000, marker: "stored")
        try ChatGPTSessionStore(store: try FileSecureStore(directory: store)).save(
            try ChatGPTSession(idToken: TestJWT.idToken(account: "acct-store"), accessToken: storeToken, refreshToken: "rt-store")
        )
        environment["CODEXKIT_HOME"] = directory.appendingPathComponent("codexkit").path
        let viaStore = try await CommandRunner.codexctl(["send", "Hi", "--ephemeral", "--endpoint", endpoint, "--auth", "session"], environment: environment)
        #expect(viaStore.status == 0, "\(viaStore.stderr)")
        #expect(viaStore.stdout == "From the store.\n")
        #expect(server.requests.last?.header("authorization") == "Bearer \(storeToken)")
        #expect(server.requests.last?.header("chatgpt-account-id") == "acct-store")
        #expect(!viaStore.stderr.contains("rt-store") && !viaFile.stderr.contains("rt-cli"))
    }
}
