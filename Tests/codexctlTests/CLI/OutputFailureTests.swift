import CodexCore
import CodexStorageSQLite
import CodexTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Standard output that fails (a full disk, a closed descriptor, a reader that went away) and the stop
/// signals: every command ends with a documented status and one line at most, never a trap, and a
/// turn that was streaming is recorded interrupted.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct OutputFailureTests {
    static let fullDisk = "Error: output_failed: cannot write output: No space left on device\n"

    @Test func everyHelpPageIntoAFullDiskOrAClosedOutputExitsOneWithOneLine() async throws {
        let pages = [["--version"], ["help"], ["help", "--markdown"]] + (try await CommandMatrixTests.leafCommands()).map { ["help"] + $0 }
        // Fifty-odd short children: one after another on a thread of their own, awaited once.
        let results = try await ChildProcess.onOwnThread {
            try pages.map { ($0, try CommandRunner.codexctlBlocking($0, redirecting: "> /dev/full")) }
        }
        #expect(results.count == 53)
        for (arguments, full) in results {
            #expect(full.status == 1, "\(arguments): \(full.status) \(full.stderr.prefix(300))")
            #expect(full.stderr == Self.fullDisk, "\(arguments)")
        }
        for arguments in [["help"], ["demo"]] {
            let closed = try await CommandRunner.codexctl(arguments, redirecting: ">&-")
            #expect(closed.status == 1, "\(arguments): \(closed.status) \(closed.stderr.prefix(300))")
            #expect(closed.stderr == "Error: output_failed: cannot write output: Bad file descriptor\n", "\(arguments)")
        }
        let demo = try await CommandRunner.codexctl(["demo"], redirecting: "> /dev/full")
        #expect(demo.status == 1 && demo.stderr == Self.fullDisk, "\(demo.status) \(demo.stderr.prefix(300))")
    }

    @Test(arguments: [true, false])
    func aDemoIntoAPipeWhoseReaderLeavesEndsQuietlyWith141(ignoringSIGPIPE: Bool) async throws {
        let directory = try temporaryDirectory("demo-pipe")
        defer { try? FileManager.default.removeItem(at: directory) }
        let errors = directory.appendingPathComponent("stderr").path
        // bash's PIPESTATUS gives codexctl's own status, not head's.
        let script = (ignoringSIGPIPE ? "trap '' PIPE; " : "") + #""$0" demo 2> "$1" | head -c1 > /dev/null; echo "${PIPESTATUS[0]}""#
        let codexctl = CommandRunner.productsDirectory.appendingPathComponent("codexctl").path
        let result = try await CommandRunner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", script, codexctl, errors])
        #expect(result.stdout == "141\n", "\(result.stdout) \(result.stderr)")
        #expect(try String(contentsOfFile: errors, encoding: .utf8) == "", "nothing on stderr")
    }

    /// A reply that streams `Partial`, then a delta over and over until the client goes away (without a
    /// sequence number: a repeated one is a duplicate the decoder drops).
    static func endless() -> ScriptedReply {
        let head = [
            SendCommandTests.event(#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress"}}"#),
            SendCommandTests.event(#"{"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Partial"}"#),
        ]
        let more = SendCommandTests.event(#"{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":" and more"}"#)
        return ScriptedReply(
            headers: [.init(name: "Content-Type", value: "text/event-stream")],
            parts: [.bytes(Array(head.joined().utf8)), .repeating(Array(more.utf8), times: nil)], framing: .chunked
        )
    }

    /// The latest turn of the database's one thread, and the thread's status.
    static func lastTurn(_ database: String) async throws -> (turn: AgentTurnStatus?, thread: AgentThreadStatus) {
        let store = try SQLiteRuntimeStateStore(readingAt: database)
        let thread = try #require(try await store.threads().first)
        return (try await store.latestTurn(of: thread.id)?.status, thread.status)
    }

    @Test(arguments: ["full", "pipe"])
    func aSendWhoseOutputFailsMidTurnIsRecordedInterrupted(output: String) async throws {
        let directory = try temporaryDirectory("send-output")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [Self.endless()])
        defer { server.shutdown() }
        let database = directory.appendingPathComponent("state.sqlite").path
        let errors = directory.appendingPathComponent("stderr").path
        let send = #""$0" send 'Write forever' --endpoint "$2" --db "$3" 2> "$1""#
        // The pipe's reader takes the first seven bytes and leaves: a later write gets EPIPE.
        let script = output == "full" ? send + " > /dev/full; echo $?" : send + #" | head -c7 > /dev/null; echo "${PIPESTATUS[0]}""#
        let codexctl = CommandRunner.productsDirectory.appendingPathComponent("codexctl").path
        let result = try await CommandRunner.run(
            URL(fileURLWithPath: "/bin/bash"), ["-c", script, codexctl, errors, server.baseURL.appendingPathComponent("v1").absoluteString, database],
            environment: SendCommandTests.environment(directory)
        )
        #expect(result.stdout == (output == "full" ? "1\n" : "141\n"), "\(result.stdout) \(result.stderr)")
        let printed = try String(contentsOfFile: errors, encoding: .utf8)
        // The new thread's ID comes first, as for every send that creates one.
        let thread = try #require(try await SQLiteRuntimeStateStore(readingAt: database).threads().first)
        #expect(printed == "thread \(thread.id.rawValue)\n" + (output == "full" ? Self.fullDisk : ""), "\(printed.prefix(500))")
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard), "the connection was closed")
        let state = try await Self.lastTurn(database)
        #expect(state.turn == .interrupted)
        #expect(state.thread == .idle)
    }

    @Test(arguments: ["send", "chat"])
    func sigtermStopsTheTurnLikeCtrlCAndExits143(command: String) async throws {
        let directory = try temporaryDirectory("sigterm")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [Self.endless()])
        defer { server.shutdown() }
        let database = directory.appendingPathComponent("state.sqlite").path
        let screen = directory.appendingPathComponent("stdout.txt")
        let codexctl = CommandRunner.productsDirectory.appendingPathComponent("codexctl").path
        var arguments = [command, "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString, "--db", database]
        if command == "send" { arguments.insert("Write forever", at: 1) }
        let result = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", #"exec "$0" "$@" > "$SCREEN""#, codexctl] + arguments,
            stdin: command == "chat" ? "Write forever\n" : nil,
            environment: SendCommandTests.environment(directory).merging(["SCREEN": screen.path]) { $1 }
        ) { pid in
            for _ in 0..<60_000 {
                if let shown = try? String(contentsOf: screen, encoding: .utf8), shown.contains("Partial") { break }
                try? await Task.sleep(for: .milliseconds(1))
            }
            kill(pid, SIGTERM)
        }
        #expect(result.status == 143, "\(result.stderr)")
        #expect(!result.killed)
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard), "the connection was closed")
        let state = try await Self.lastTurn(database)
        #expect(state.turn == .interrupted)
        #expect(state.thread == .idle)
    }

    @Test func aChatLineOverOneMebibyteIsRefusedAndTheNextOneIsSent() async throws {
        let directory = try temporaryDirectory("chat-long")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply(["Short reply."]))])
        defer { server.shutdown() }
        let database = directory.appendingPathComponent("state.sqlite").path
        let long = String(repeating: "x", count: (1 << 20) + 1)
        let exact = String(repeating: "y", count: 1 << 20)
        let result = try await CommandRunner.codexctl(
            ["chat", "--db", database, "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString],
            stdin: long + "\n" + "hello\n", environment: SendCommandTests.environment(directory)
        )
        #expect(result.status == 0, "\(result.stderr.prefix(300))")
        #expect(result.stderr.contains("not sent: the line is longer than 1 MiB\n"))
        #expect(result.stdout.contains("Short reply.\n"))
        #expect(server.requests.count == 1)
        let body = String(decoding: try #require(server.requests.first?.body), as: UTF8.self)
        #expect(body.contains("hello") && !body.contains("xxxx"))

        // A line of exactly 1 MiB is sent.
        let fits = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply(["Long reply."]))])
        defer { fits.shutdown() }
        let sent = try await CommandRunner.codexctl(
            ["chat", "--db", database, "--endpoint", fits.baseURL.appendingPathComponent("v1").absoluteString],
            stdin: exact + "\r\n", environment: SendCommandTests.environment(directory)
        )
        #expect(sent.status == 0, "\(sent.stderr.prefix(300))")
        #expect(!sent.stderr.contains("not sent"))
        #expect(fits.requests.count == 1)
        #expect(String(decoding: try #require(fits.requests.first?.body), as: UTF8.self).contains(exact + "\""))
    }
}
