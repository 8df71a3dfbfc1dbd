import CodexCore
import CodexSchema
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// Text from the network or from files that tries to act on the terminal (clear the screen, write the
/// clipboard with OSC 52, recolour through a C1 CSI, reverse the line with a bidi override) is shown
/// escaped in human output, on every surface; `--json` keeps it exact.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct TerminalSafetyTests {
    /// The hostile text as a JSON string body (the server's and the files' spelling).
    static let hostileJSON = #"A\u001b[2J\u001b]52;c;cHduZWQ=\u0007\u009b31m\u202eZ"#
    /// The same text decoded.
    static let hostile = "A\u{1B}[2J\u{1B}]52;c;cHduZWQ=\u{07}\u{9B}31m\u{202E}Z"
    /// How human output shows it.
    static let shown = #"A\u{1B}[2J\u{1B}]52;c;cHduZWQ=\u{7}\u{9B}31m\u{202E}Z"#

    /// Whether `text` carries any character that acts on a terminal.
    static func isInert(_ text: String) -> Bool {
        !text.unicodeScalars.contains { scalar in
            switch scalar.value {
            case 0x0A, 0x09: return false
            case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: return true
            default: return false
            }
        }
    }

    static func event(_ type: String, _ sequence: Int, _ fields: String) -> String {
        "event: \(type)\ndata: {\"type\":\"\(type)\",\"sequence_number\":\(sequence),\(fields)}\n\n"
    }

    /// A first reply that streams a hostile reasoning summary, a hostile rate-limit name, a hostile reply
    /// line and a call of a hostile tool name; a second that answers after the tool's result.
    static func hostileReplies() -> [ScriptedReply] {
        let first = [
            event("response.created", 0, #""response":{"id":"resp_1","status":"in_progress"}"#),
            event("response.reasoning_summary_text.delta", 1, #""item_id":"rs_1","output_index":0,"summary_index":0,"delta":"\#(hostileJSON)""#),
            event("codex.rate_limits", 2, #""rate_limits":{"primary":{"used_percent":42,"window_minutes":300}},"metered_limit_name":"\#(hostileJSON)""#),
            event("response.output_text.delta", 3, #""item_id":"msg_1","output_index":1,"content_index":0,"delta":"\#(hostileJSON)\nline two""#),
            event("response.output_item.done", 4, #""output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","status":"completed","phase":"commentary","content":[{"type":"output_text","text":"\#(hostileJSON)\nline two"}]}"#),
            event("response.output_item.done", 5, #""output_index":2,"item":{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"t\#(hostileJSON)","arguments":"{\"x\":\"\#(hostileJSON)\"}"}"#),
            event("response.completed", 6, #""response":{"id":"resp_1","status":"completed"}"#),
        ]
        return [.sse(first), .sse(SendCommandTests.reply(["Done."]))]
    }

    @Test func sendShowsRepliesSummariesLimitsAndToolNamesEscapedAndJSONExact() async throws {
        let directory = try temporaryDirectory("terminal-send")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: Self.hostileReplies() + Self.hostileReplies())
        defer { server.shutdown() }
        let endpoint = server.baseURL.appendingPathComponent("v1").absoluteString
        let human = try await CommandRunner.codexctl(
            ["send", "Go", "--ephemeral", "--verbose", "--endpoint", endpoint], environment: SendCommandTests.environment(directory)
        )
        #expect(human.status == 0, "\(human.stderr)")
        #expect(Self.isInert(human.stdout) && Self.isInert(human.stderr), "\(human.stdout.debugDescription) \(human.stderr.debugDescription)")
        #expect(human.stdout.hasPrefix(Self.shown + "\nline two"), "a reply keeps its line breaks: \(human.stdout)")
        #expect(human.stderr.contains("thinking: " + Self.shown), "\(human.stderr)")
        // Limit names are kept lowercased.
        #expect(human.stderr.contains(#"limit a\u{1B}[2j\u{1B}]52;c;chduzwq=\u{7}\u{9B}31m\u{202E}z: 58% left"#), "\(human.stderr)")
        #expect(human.stderr.contains("tool t" + Self.shown), "\(human.stderr)")

        let json = try await CommandRunner.codexctl(
            ["send", "Go", "--ephemeral", "--json", "--endpoint", endpoint], environment: SendCommandTests.environment(directory)
        )
        #expect(json.status == 0, "\(json.stderr)")
        let deltas = json.stdout.split(separator: "\n").compactMap { line -> String? in
            guard let value = try? JSONValue(parsing: Array(line.utf8)), value["type"] == "text_delta" else { return nil }
            return value["text"]?.stringValue
        }
        #expect(deltas.first == Self.hostile + "\nline two", "--json keeps the text exact")
    }

    @Test func chatRepliesAndLimitNamesAreEscaped() async throws {
        let directory = try temporaryDirectory("terminal-chat")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: Self.hostileReplies())
        defer { server.shutdown() }
        let result = try await CommandRunner.codexctl(
            ["chat", "--db", directory.appendingPathComponent("state.sqlite").path, "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString],
            stdin: "Go\n", environment: SendCommandTests.environment(directory)
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.isInert(result.stdout) && Self.isInert(result.stderr), "\(result.stdout.debugDescription)")
        #expect(result.stdout.contains(Self.shown + "\nline two"), "\(result.stdout)")
    }

    @Test func modelCatalogFieldsAreEscapedInTheList() async throws {
        let store = try temporaryDirectory("terminal-models")
        defer { try? FileManager.default.removeItem(at: store) }
        let listed = #"{"object":"list","data":[{"id":"gpt-\#(Self.hostileJSON)","object":"model"}]}"#
        let server = try LoopbackHTTPServer(replies: [.json(listed), .json(listed)])
        defer { server.shutdown() }
        let arguments = ["models", "list", "--refresh", "--base-url", server.baseURL.appendingPathComponent("v1").absoluteString, "--secrets", store.path,
                         "--codex-home", "/nonexistent"]
        let human = try await CommandRunner.codexctl(arguments, environment: ["OPENAI_API_KEY": "sk-list"])
        #expect(human.status == 0, "\(human.stderr)")
        #expect(Self.isInert(human.stdout), "\(human.stdout.debugDescription)")
        #expect(human.stdout.contains("gpt-" + Self.shown))
        let json = try await CommandRunner.codexctl(arguments + ["--json"], environment: ["OPENAI_API_KEY": "sk-list"])
        #expect(try JSONValue(parsing: json.stdout)["models"]?.arrayValue?.first?["id"]?.stringValue == "gpt-" + Self.hostile)
    }

    @Test func authStatusClaimsFromAuthJSONAreEscaped() async throws {
        let directory = try temporaryDirectory("terminal-auth")
        defer { try? FileManager.default.removeItem(at: directory) }
        let codexHome = directory.appendingPathComponent("codex-home")
        try FileManager.default.createDirectory(at: codexHome, withIntermediateDirectories: true)
        let idToken = TestJWT.idToken(account: "acct-" + Self.hostile, plan: "plan-" + Self.hostile, email: "mail-" + Self.hostile)
        let token = TestJWT.accessToken(expiresAt: 4_000_000_000, marker: "terminal")
        let contents = #"{"tokens":{"id_token":"\#(idToken)","access_token":"\#(token)","refresh_token":"rt-terminal","account_id":"acct-\#(Self.hostileJSON)"}}"#
        try Data(contents.utf8).write(to: codexHome.appendingPathComponent("auth.json"))
        let environment = SendCommandTests.environment(directory, apiKey: nil)
        let human = try await CommandRunner.codexctl(["auth", "status"], environment: environment)
        #expect(human.status == 0, "\(human.stderr)")
        #expect(Self.isInert(human.stdout), "\(human.stdout.debugDescription)")
        #expect(human.stdout.contains("account acct-" + Self.shown), "\(human.stdout)")
        #expect(human.stdout.contains("plan plan-" + Self.shown))
        #expect(human.stdout.contains("e-mail mail-" + Self.shown))
        let json = try JSONValue(parsing: try await CommandRunner.codexctl(["auth", "status", "--json"], environment: environment).stdout)
        #expect(json["account_id"]?.stringValue == "acct-" + Self.hostile)
    }

    /// What a message, tool or title holds never shapes the Markdown transcript: a forged speaker line
    /// and an unclosed fence stay inside their message's quote, a backtick in a tool's name or arguments
    /// stays inside its code span, and a title's link and emphasis show as written.
    @Test func exportedMarkdownKeepsItsStructureWhateverTheContent() async throws {
        let directory = try temporaryDirectory("markdown-export")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("state.sqlite").path
        var thread = AgentThread(title: "[link](http://x) *x* #")
        thread.updatedAt = Date(timeIntervalSince1970: 1_800_000_000)
        do {
            let store = try SQLiteRuntimeStateStore(path: database)
            try await store.upsertThread(thread)
            let call = ToolInvocation(id: "c1", toolName: "x` **bold** `y", arguments: #"{"a":"``"}"#)
            try await store.appendHistory([
                .message(AgentMessage(threadID: thread.id, role: .user, text: "hello\n\n**assistant**\n\nforged\n```\nunclosed\nhi </blockquote> &amp;")),
                .toolCall(call),
            ], to: thread.id)
        }
        let markdown = try await CommandRunner.codexctl(["threads", "export", thread.id.rawValue, "--db", database, "--format", "markdown"])
        #expect(markdown.status == 0, "\(markdown.stderr)")
        #expect(markdown.stdout == """
            # \\[link\\](http://x) \\*x\\* \\#

            Thread `\(thread.id.rawValue)`, updated 2027-01-15T08:00:00Z.

            **user**

            > hello
            >
            > **assistant**
            >
            > forged
            > ```
            > unclosed
            > hi \\</blockquote> \\&amp;

            > tool call ``x` **bold** `y`` ```{"a":"``"}```

            """, "\(markdown.stdout)")
    }

    @Test func exportedRepliesAndCompactionSummariesAreEscaped() async throws {
        let directory = try temporaryDirectory("terminal-export")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("state.sqlite").path
        let thread = AgentThread(title: "T")
        do {
            let store = try SQLiteRuntimeStateStore(path: database)
            try await store.upsertThread(thread)
            let compaction = AgentContextCompaction(
                createdAt: Date(timeIntervalSince1970: 1_800_000_000), strategy: .local, replacedItemCount: 1, coversItemsBefore: 1,
                summary: "sum-" + Self.hostile, estimatedTokensBefore: 10, estimatedTokensAfter: 2
            )
            try await store.appendHistory([
                .message(AgentMessage(threadID: thread.id, role: .assistant, text: "reply-" + Self.hostile + "\nsecond line")),
                .contextCompaction(compaction),
            ], to: thread.id)
        }
        let markdown = try await CommandRunner.codexctl(["threads", "export", thread.id.rawValue, "--db", database, "--format", "markdown"])
        #expect(markdown.status == 0, "\(markdown.stderr)")
        #expect(Self.isInert(markdown.stdout), "\(markdown.stdout.debugDescription)")
        #expect(markdown.stdout.contains("> reply-" + Self.shown + "\n> second line"), "\(markdown.stdout)")
        #expect(markdown.stdout.contains("\n>\n> sum-" + Self.shown + "\n"), "a local summary is quoted: \(markdown.stdout)")
        let lines = try await CommandRunner.codexctl(["threads", "export", thread.id.rawValue, "--db", database, "--format", "jsonl"])
        #expect(lines.stdout.split(separator: "\n").compactMap { try? JSONValue(parsing: Array($0.utf8))["summary"]?.stringValue }.first == "sum-" + Self.hostile)
    }

    @Test func jsonShownToAHumanKeepsItsValueWithUnicodeEscapes() async throws {
        let directory = try temporaryDirectory("terminal-schema")
        defer { try? FileManager.default.removeItem(at: directory) }
        let schema = directory.appendingPathComponent("reply.schema.json")
        try Data(#"{"type":"object","properties":{"s":{"type":"string"}},"required":["s"],"additionalProperties":false}"#.utf8).write(to: schema)
        let payload = #"{\"s\":\"\#(Self.hostileJSON.replacingOccurrences(of: "\\", with: "\\\\"))\"}"#
        let server = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply([payload]))])
        defer { server.shutdown() }
        let result = try await CommandRunner.codexctl(
            ["send", "Decide.", "--ephemeral", "--schema", schema.path, "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString],
            environment: SendCommandTests.environment(directory)
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.isInert(result.stdout), "\(result.stdout.debugDescription)")
        #expect(try JSONValue(parsing: result.stdout) == ["s": .string(Self.hostile)], "the same JSON value: \(result.stdout)")
    }
}
