import CodexCore
import CodexStorageSQLite
import CodexTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `codexctl chat` on a pseudo-terminal against the loopback server: the test types, reads the screen,
/// and checks the database afterwards.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct ChatCommandTests {
    private func held(_ text: String) -> ScriptedReply {
        let head = [
            SendCommandTests.event(#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_h","status":"in_progress"}}"#),
            SendCommandTests.event(#"{"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_h","output_index":0,"content_index":0,"delta":"\#(text)"}"#),
        ]
        let tail = [
            SendCommandTests.event(#"{"type":"response.output_item.done","sequence_number":2,"output_index":0,"item":{"type":"message","id":"msg_h","role":"assistant","status":"completed","content":[{"type":"output_text","text":"\#(text)"}]}}"#),
            SendCommandTests.event(#"{"type":"response.completed","sequence_number":3,"response":{"id":"resp_h","status":"completed"}}"#),
        ]
        return ScriptedReply(
            headers: [.init(name: "Content-Type", value: "text/event-stream")],
            parts: [.bytes(Array(head.joined().utf8)), .hold, .bytes(Array(tail.joined().utf8))], framing: .chunked
        )
    }

    @Test func aConversationWithSteeringCommandsAndCtrlCIsKeptInTheDatabase() async throws {
        let directory = try temporaryDirectory("chat")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [
            .sse(SendCommandTests.reply(["Hi there."])),
            held("Drafting"),
            .sse(SendCommandTests.reply(["Short version."])),
            held("Endless"),
        ])
        defer { server.shutdown() }
        let database = directory.appendingPathComponent("state.sqlite").path
        let terminal = try PseudoTerminal(
            [CommandRunner.productsDirectory.appendingPathComponent("codexctl").path, "chat", "--db", database,
             "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString],
            environment: SendCommandTests.environment(directory), directory: directory
        )
        #expect(await terminal.waitFor("> "))
        terminal.type("Hello\n")
        #expect(await terminal.waitFor("Hi there.\r\n> "), "the reply streamed, then the prompt: \(terminal.screen)")

        // A line typed while the reply streams is added to the turn and goes out with one more request.
        terminal.type("Write a draft\n")
        #expect(await terminal.waitFor("Drafting"))
        terminal.type("Keep it short\n")
        #expect(await terminal.waitFor("(added to the turn)"))
        server.releaseHeld()
        #expect(await terminal.waitFor("Short version.\r\n> "), "\(terminal.screen)")
        #expect(server.requests.count == 3)
        #expect(String(decoding: server.requests[2].body, as: UTF8.self).contains("Keep it short"))

        terminal.type("/threads\n")
        #expect(await terminal.waitFor("1 thread"))

        // Ctrl-C interrupts the running turn and returns to the prompt; Ctrl-D at the prompt exits.
        terminal.type("Go on forever\n")
        #expect(await terminal.waitFor("Endless"))
        terminal.type("\u{03}")
        #expect(await terminal.waitFor("interrupted"), "\(terminal.screen)")
        #expect(await terminal.waitFor("> ", count: 5))
        terminal.type("\u{04}")
        let ended = await terminal.exit()
        #expect(ended.status == 0 && !ended.killed, "status \(ended.status) killed \(ended.killed): \(terminal.screen) errors: \(terminal.errors)")
        server.releaseHeld()

        let store = try SQLiteRuntimeStateStore(readingAt: database)
        let thread = try #require(try await store.threads().first)
        #expect(try await store.latestTurn(of: thread.id)?.status == .interrupted)
        let messages = try await store.history(of: thread.id, query: AgentHistoryQuery(limit: 100)).items.compactMap { item -> String? in
            if case .message(let message) = item { return "\(message.role.rawValue): \(message.text)" }
            return nil
        }
        #expect(messages == [
            "user: Hello", "assistant: Hi there.", "user: Write a draft", "assistant: Drafting", "user: Keep it short",
            "assistant: Short version.", "user: Go on forever",
        ])
    }

    @Test func aCommandTypedDuringAReplyRunsWhenItEndsAndEachMessageStartsOnItsOwnLine() async throws {
        let directory = try temporaryDirectory("chat")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [held("Drafting"), .sse(SendCommandTests.reply(["Next."]))])
        defer { server.shutdown() }
        let database = directory.appendingPathComponent("state.sqlite").path
        let terminal = try PseudoTerminal(
            [CommandRunner.productsDirectory.appendingPathComponent("codexctl").path, "chat", "--db", database,
             "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString],
            environment: SendCommandTests.environment(directory), directory: directory
        )
        #expect(await terminal.waitFor("> "))
        terminal.type("Write a draft\n")
        #expect(await terminal.waitFor("Drafting"))
        terminal.type("/model gpt-later\n")
        #expect(await terminal.waitFor("(runs when the reply ends)"))
        server.releaseHeld()
        // The command's output (not the echo of "/model …") follows the reply's line, then the prompt.
        #expect(await terminal.waitFor("\r\nmodel gpt-later\r\n> "), "\(terminal.screen.debugDescription)")
        let screen = terminal.screen
        let reply = try #require(screen.range(of: "Drafting"))
        let command = try #require(screen.range(of: "\r\nmodel gpt-later\r\n> "))
        #expect(reply.upperBound < command.lowerBound, "the command ran after the reply: \(screen.debugDescription)")
        terminal.type("And now\n")
        #expect(await terminal.waitFor("Next.\r\n> "), "\(terminal.screen)")
        #expect(try CodexHabitsTests.model(server.requests[1]) == "gpt-later")
        terminal.type("\u{04}")
        let ended = await terminal.exit()
        #expect(ended.status == 0 && !ended.killed, "\(terminal.screen)")
    }

    /// `chat` at a terminal in `directory` (a new store there), against `server`; waits for the prompt.
    private func chatAtATerminal(in directory: URL, server: LoopbackHTTPServer) async throws -> PseudoTerminal {
        let terminal = try PseudoTerminal(
            [CommandRunner.productsDirectory.appendingPathComponent("codexctl").path, "chat", "--db", directory.appendingPathComponent("state.sqlite").path,
             "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString],
            environment: SendCommandTests.environment(directory), directory: directory
        )
        #expect(await terminal.waitFor("> "))
        return terminal
    }

    /// Ctrl-C on a reply, then Ctrl-C at the prompt: the session ends with 0, as a Ctrl-C at the prompt
    /// does (the signals the session saw are not seen again while its servers end).
    @Test func ctrlCOnAReplyThenAtThePromptEndsWithZero() async throws {
        let directory = try temporaryDirectory("chat-ctrlc")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [held("Endless")])
        defer { server.shutdown() }
        let terminal = try await chatAtATerminal(in: directory, server: server)
        terminal.type("Go on forever\n")
        #expect(await terminal.waitFor("Endless"))
        terminal.type("\u{03}")
        #expect(await terminal.waitFor("interrupted"), "\(terminal.screen)")
        #expect(await terminal.waitFor("> ", count: 2))
        terminal.type("\u{03}")
        let ended = await terminal.exit()
        #expect(ended.status == 0 && !ended.killed, "status \(ended.status) killed \(ended.killed): \(terminal.screen)")
        server.releaseHeld()
    }

    /// A line the terminal cut at its limit is not sent as if it were whole.
    @Test func aLineTheTerminalCutIsNotSent() async throws {
        let directory = try temporaryDirectory("chat-long")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply(["Short one."]))])
        defer { server.shutdown() }
        let terminal = try await chatAtATerminal(in: directory, server: server)
        terminal.type(String(repeating: "x", count: 5_000) + "\n")
        #expect(await terminal.waitFor("not sent: the terminal keeps at most 4095 bytes of a line"), "\(terminal.screen.suffix(300))")
        terminal.type("short\n")
        #expect(await terminal.waitFor("Short one."))
        terminal.type("\u{04}")
        let ended = await terminal.exit()
        #expect(ended.status == 0 && !ended.killed)
        #expect(server.requests.count == 1)
    }

    /// Text typed and left with Ctrl-D instead of Enter was never submitted: the session ends without
    /// sending it.
    @Test func textLeftWithCtrlDIsNotSent() async throws {
        let directory = try temporaryDirectory("chat-eof")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply(["Never."]))])
        defer { server.shutdown() }
        let terminal = try await chatAtATerminal(in: directory, server: server)
        // The first Ctrl-D hands the typed text over without a newline, the second ends the input.
        terminal.type("partial\u{04}")
        terminal.type("\u{04}")
        let ended = await terminal.exit()
        #expect(ended.status == 0 && !ended.killed, "\(terminal.screen)")
        #expect(server.requests.isEmpty, "\(terminal.screen)")
    }
}

/// `chat` with piped input, and `--thread` against a database that does not exist.
@Suite struct ChatInputTests {
    @Test func pipedInputGetsItsReplyBeforeTheSessionEnds() async throws {
        let directory = try temporaryDirectory("chat-pipe")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply(["Piped reply."]))])
        defer { server.shutdown() }
        let database = directory.appendingPathComponent("state.sqlite").path
        let result = try await CommandRunner.codexctl(
            ["chat", "--db", database, "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString], stdin: "hello\n",
            environment: SendCommandTests.environment(directory)
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Piped reply.\n"), "\(result.stdout)")
        let store = try SQLiteRuntimeStateStore(readingAt: database)
        let thread = try #require(try await store.threads().first)
        #expect(try await store.latestTurn(of: thread.id)?.status == .completed, "the turn finished before the session ended")
    }

    /// A script cannot see error lines: a piped session whose turns failed ends with status 1, and each
    /// failure is shown as `send` shows it (the service's request ID, the hint).
    @Test func aPipedSessionWhoseTurnsFailedEndsWithOne() async throws {
        let directory = try temporaryDirectory("chat-fail")
        defer { try? FileManager.default.removeItem(at: directory) }
        let refusal = #"{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}"#
        let server = try LoopbackHTTPServer(replies: [
            .json(refusal, status: 401, headers: [.init(name: "x-request-id", value: "req_chat_1")]),
            .json(refusal, status: 401, headers: [.init(name: "x-request-id", value: "req_chat_2")]),
        ])
        defer { server.shutdown() }
        let result = try await CommandRunner.codexctl(
            ["chat", "--db", directory.appendingPathComponent("state.sqlite").path, "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString],
            stdin: "a\nb\n", environment: SendCommandTests.environment(directory)
        )
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("(request req_chat_1)\nhint: sign in"), "\(result.stderr)")
        #expect(result.stderr.contains("(request req_chat_2)\nhint: sign in"), "\(result.stderr)")
    }

    @Test func aThreadOfAMissingDatabaseCreatesNothing() async throws {
        let directory = try temporaryDirectory("chat-missing")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("x/y/state.sqlite").path
        for command in ["send", "chat"] {
            var arguments = [command, "--thread", "nope", "--db", database, "--endpoint", "http://127.0.0.1:9/v1"]
            if command == "send" { arguments.insert("Hi", at: 1) }
            let result = try await CommandRunner.codexctl(arguments, environment: SendCommandTests.environment(directory))
            #expect(result.status == 1, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("thread_not_found"))
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("x").path), "no directory or database was created")
    }

    @Test func pipedLinesAreTurnsAndCommandsInOrderEachAfterThePreviousReplyWithoutPrompts() async throws {
        let directory = try temporaryDirectory("chat-pipe")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply(["Reply one."])), .sse(SendCommandTests.reply(["Reply two."]))])
        defer { server.shutdown() }
        let database = directory.appendingPathComponent("state.sqlite").path
        let result = try await CommandRunner.codexctl(
            ["chat", "--db", database, "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString],
            stdin: "hello\n/model gpt-x\n\nsecond\n", environment: SendCommandTests.environment(directory)
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "Reply one.\nmodel gpt-x\nReply two.\n")
        #expect(server.requests.count == 2)
        // The second turn went out after the first reply (it is in the history) and after the command.
        let second = String(decoding: server.requests[1].body, as: UTF8.self)
        #expect(second.contains("Reply one.") && second.contains("second"))
        #expect(try CodexHabitsTests.model(server.requests[1]) == "gpt-x")
        let store = try SQLiteRuntimeStateStore(readingAt: database)
        let thread = try #require(try await store.threads().first)
        #expect(result.stderr == "thread \(thread.id.rawValue)\n")
    }

    @Test func ctrlCEndsAPipedSessionAfterRecordingTheTurnInterrupted() async throws {
        let directory = try temporaryDirectory("chat-pipe")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [OutputFailureTests.endless(), .sse(SendCommandTests.reply(["Never sent."]))])
        defer { server.shutdown() }
        let database = directory.appendingPathComponent("state.sqlite").path
        let screen = directory.appendingPathComponent("stdout.txt")
        let input = try CommandRunner.temporaryFile("first\nsecond\n", name: "input.txt")
        let codexctl = CommandRunner.productsDirectory.appendingPathComponent("codexctl").path
        let result = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", #"exec "$0" "$@" > "$SCREEN" < "$INPUT""#, codexctl, "chat", "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString, "--db", database],
            environment: SendCommandTests.environment(directory).merging(["SCREEN": screen.path, "INPUT": input]) { $1 }
        ) { pid in
            for _ in 0..<60_000 {
                if let shown = try? String(contentsOf: screen, encoding: .utf8), shown.contains("Partial") { break }
                try? await Task.sleep(for: .milliseconds(1))
            }
            kill(pid, SIGINT)
        }
        #expect(result.status == 130, "\(result.stderr)")
        #expect(server.requests.count == 1, "the second line was not sent")
        let store = try SQLiteRuntimeStateStore(readingAt: database)
        let thread = try #require(try await store.threads().first)
        #expect(try await store.latestTurn(of: thread.id)?.status == .interrupted)
    }
}
