import CodexCore
@testable import CodexRuntime
import CodexSchema
import CodexTestSupport
import Foundation
import Testing

/// The client against servers that misbehave on purpose (`Tests/MCPServers/hostile_server.py`): every
/// failure is a typed error, nothing hangs, and no process is left behind.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct MCPHostileServerTests {
    private func hostile(_ mode: String, clock: any Clock<Duration> = ContinuousClock(), log: any AgentLogSink = NoOpAgentLogSink()) async throws -> MCPClient {
        try MCPClient(try await MCPServers.stdio("hostile", script: "hostile_server.py", arguments: [mode], maximumMessageBytes: 1 << 20), logSink: log, clock: clock)
    }

    private func failure(_ body: () async throws -> Void) async -> MCPError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? MCPError
        }
    }

    @Test func fallsBackToTheHandshakeWhenTheProbeIsRefused() async throws {
        let client = try await hostile("ok")
        defer { Task { await client.shutdown() } }
        let description = try await client.connect()
        #expect(description.era == .handshake(version: "2025-11-25") && description.name == "hostile")
        #expect(try await client.callTool("poke").content == [.text("ok")])
        try await client.ping()
        #expect(client.processStarts == 1)
    }

    @Test func restartsAServerThatExitsOnTheProbeAndShakesHands() async throws {
        let client = try await hostile("exit-on-probe")
        defer { Task { await client.shutdown() } }
        #expect(try await client.connect().era == .handshake(version: "2025-11-25"))
        #expect(client.processStarts == 2)
    }

    @Test func refusesServersThatShareNoRevision() async throws {
        let future = try await hostile("future")
        let futureError = await failure { try await future.connect() }
        #expect(futureError?.code == .unsupportedProtocolVersion)
        let statelessOnly = try await hostile("stateless-only")
        let statelessError = await failure { try await statelessOnly.connect() }
        #expect(statelessError?.code == .unsupportedProtocolVersion && statelessError?.rpcCode == -32022)
        await future.shutdown()
        await statelessOnly.shutdown()
    }

    @Test func stopsAServerThatWritesSomethingElseThanJSONRPCAndStartsItAgain() async throws {
        let client = try await hostile("malformed")
        try await client.connect()
        let first = try #require(client.processIdentifier)
        let error = await failure { _ = try await client.callTool("poke") }
        #expect(error?.code == .malformedMessage && error?.server == "hostile")
        // The next use starts a new process (and meets the same server).
        let again = await failure { _ = try await client.callTool("poke") }
        #expect(again?.code == .malformedMessage && client.processStarts == 2)
        await client.shutdown()
        #expect(!MCPServers.exists(first))
    }

    @Test func stopsAServerWhoseMessageIsOverTheLimit() async throws {
        let client = try await hostile("oversize")
        let error = await failure { _ = try await client.callTool("poke") }
        #expect(error?.code == .messageTooLarge)
        await client.shutdown()
    }

    @Test func failsACallWhoseServerDiesAndRestartsItOnTheNextUse() async throws {
        let client = try await hostile("die")
        let error = await failure { _ = try await client.callTool("poke") }
        #expect(error?.code == .serverExited)
        #expect(try await client.listTools().map(\.name) == ["poke"])
        #expect(client.processStarts == 2)
        await client.shutdown()
    }

    @Test func timesOutAReplyThatNeverComesAndTellsTheServer() async throws {
        let clock = ManualClock()
        let log = WaitingLogSink()
        let client = try await hostile("silent", clock: clock, log: log)
        defer { Task { await client.shutdown() } }
        try await client.connect()
        let call = Task { try await client.callTool("poke") }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(60))
        let error = await failure { _ = try await call.value }
        #expect(error?.code == .timeout)
        // Request 1 was the probe, 2 the handshake, 3 the call.
        let line = await log.stderrLine(containing: "cancelled")
        #expect(line == "silent: cancelled 3")
        try await client.ping()
    }

    /// The list's limits hold on its last (or only) page too (a page of 100,000 tools was taken whole), and
    /// two tools of one name, which would reach the model as one name with two meanings, are refused.
    @Test(arguments: [("many-tools", "tools/list lists more than 10000 tools"), ("duplicate-tools", "tools/list lists two tools named poke")])
    func refusesAToolListPastItsLimitOnOnePageOrWithTwoToolsOfOneName(_ mode: String, _ message: String) async throws {
        let client = try await hostile(mode)
        defer { Task { await client.shutdown() } }
        let error = await failure { _ = try await client.listTools() }
        #expect(error?.code == .protocolViolation)
        #expect(error?.message == message)
        #expect(error?.server == "hostile")
    }

    @Test func survivesAFloodOfNotifications() async throws {
        let client = try await hostile("flood")
        defer { Task { await client.shutdown() } }
        #expect(try await client.callTool("poke").content == [.text("survived")])
    }

    @Test func refusesTheRequestsItDoesNotSupportAndAnswersPing() async throws {
        let client = try await hostile("requests")
        defer { Task { await client.shutdown() } }
        let result = try await client.callTool("poke")
        guard case .text(let text)? = result.content.first else {
            Issue.record("no text")
            return
        }
        let replies = try JSONValue(parsing: text)
        for key in ["s0", "s1", "s2"] { #expect(replies[key]?["code"] == -32601) }
        #expect(replies["s3"] == .object(JSONObject()))
    }

    @Test func reportsAServerThatCannotStart() async throws {
        let client = try MCPClient(MCPServerConfiguration(name: "missing", transport: .stdio(command: "/nonexistent/codexkit-mcp-server")))
        let error = await failure { try await client.connect() }
        #expect(error?.code == .spawnFailed && error?.server == "missing")
        #expect(throws: MCPError.self) { try MCPClient(MCPServerConfiguration(name: "bad name", transport: .stdio(command: "x"))) }
        #expect(throws: MCPError.self) { try MCPClient(MCPServerConfiguration(name: "x", transport: .stdio(command: ""))) }
    }
}

extension MCPHostileServerTests {
    @Test func shuttingDownWhileConnectingEndsTheServerProcess() async throws {
        let clock = ManualClock()
        let log = WaitingLogSink()
        let client = try await hostile("mute", clock: clock, log: log)
        let connecting = Task { try await client.connect() }
        let line = await log.stderrLine(containing: "mute: pid ")
        let pid = try #require(Int32(line.dropFirst("mute: pid ".count)))
        #expect(MCPServers.exists(pid))
        await client.shutdown()
        await #expect(throws: (any Error).self) { try await connecting.value }
        #expect(!MCPServers.exists(pid))
    }

    @Test func aServerWhoseChildKeepsItsOutputOpenStillEndsTheConnection() async throws {
        let log = WaitingLogSink()
        let client = try await hostile("orphan", log: log)
        defer { Task { await client.shutdown() } }
        let error = await failure { _ = try await client.callTool("poke") }
        #expect(error?.code == .serverExited)
        let line = await log.stderrLine(containing: "orphan: grandchild ")
        let grandchild = try #require(Int32(line.dropFirst("orphan: grandchild ".count)))
        // The reaper ended the server's process group with it: nothing of the server is left.
        var gone = false
        for _ in 0..<500 where !gone {
            gone = !MCPServers.exists(grandchild) || MCPServers.isZombie(grandchild)
            if !gone { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(gone)
    }
}

extension MCPHostileServerTests {
    /// The kernel objects (`pipe:[…]`, `socket:[…]`) that descriptors of this process point at.
    private func openObjects() -> Set<String> {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") })
    }

    private func objects(of descriptors: [Int32]) -> Set<String> {
        Set(descriptors.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") })
    }

    @Test func noDescriptorOrProcessIsLeftAfterShutdownCrashOrProtocolBreak() async throws {
        for mode in ["ok", "die", "malformed", "oversize"] {
            let client = try await hostile(mode)
            try await client.connect()
            let pid = try #require(client.processIdentifier)
            let held = objects(of: client.processDescriptors)
            #expect(held.count == 3 && held.allSatisfy { $0.hasPrefix("pipe:[") || $0.hasPrefix("socket:[") }, "\(mode): \(held)")
            _ = try? await client.callTool("poke")
            await client.shutdown()
            // The reader threads close their pipes once the process is gone; wait for that (a hang guard).
            for _ in 0..<500 where !openObjects().isDisjoint(with: held) { try await Task.sleep(for: .milliseconds(10)) }
            #expect(openObjects().isDisjoint(with: held), "\(mode) left \(openObjects().intersection(held))")
            #expect(!MCPServers.exists(pid), "\(mode) left process \(pid)")
        }
    }

    @Test func releasingTheClientEndsTheServer() async throws {
        var client: MCPClient? = try await hostile("ok")
        try await client?.connect()
        let pid = try #require(client?.processIdentifier)
        client = nil
        var gone = false
        for _ in 0..<500 where !gone {
            gone = !MCPServers.exists(pid)
            if !gone { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(gone)
    }
}

extension MCPHostileServerTests {
    @Test func acceptsAnOlderHandshakeRevisionTheServerCounterOffers() async throws {
        let client = try await hostile("older")
        defer { Task { await client.shutdown() } }
        #expect(try await client.connect().era == .handshake(version: "2025-03-26"))
        #expect(try await client.callTool("poke").content == [.text("ok")])
    }
}

extension MCPHostileServerTests {
    /// The measurement, in a process of its own (RuntimeFixture `mcp-memory`): `code=… baseline=KiB peak=KiB`.
    private func measure(_ mode: String, limit: Int) async throws -> (code: String, growthKiB: Int) {
        let outcome = try await ChildProcess.run(ChildProcess.product("RuntimeFixture"), [
            "mcp-memory", "--python", try await MCPTestPython.interpreter(), "--script", MCPTestPython.script("hostile_server.py"),
            "--mode", mode, "--limit", String(limit),
        ])
        let fields = Dictionary(uniqueKeysWithValues: outcome.stdout.split(whereSeparator: \.isWhitespace).compactMap { pair -> (String, String)? in
            let parts = pair.split(separator: "=", maxSplits: 1)
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        })
        return (fields["code"] ?? "missing: \(outcome.stderr)", (Int(fields["peak"] ?? "") ?? 0) - (Int(fields["baseline"] ?? "") ?? 0))
    }

    @Test func memoryFollowsTheMessageLimitNotWhatTheServerSends() async throws {
        // A 256 MiB line against a 4 MiB limit: refused at the limit. The peak grows by a small multiple
        // of the limit (the line's buffer doubling as it grows), far below the 256 MiB sent.
        let huge = try await measure("huge", limit: 4 << 20)
        #expect(huge.code == "mcp_message_too_large")
        #expect(huge.growthKiB < 32 * 1024, "the peak grew by \(huge.growthKiB) KiB")
        // 20,000 notifications for nobody: read and dropped as they come.
        let flood = try await measure("flood", limit: 4 << 20)
        #expect(flood.code == "ok")
        #expect(flood.growthKiB < 32 * 1024, "the peak grew by \(flood.growthKiB) KiB")
        // 100,000 requests to the client: a few answered at a time, the rest dropped. Each once read the
        // answering closure out of a lock, which wrapped it once more: memory grew with the flood and
        // freeing the chain overflowed the stack (a crash at 60,000).
        let requests = try await measure("request-flood", limit: 4 << 20)
        #expect(requests.code == "ok")
        #expect(requests.growthKiB < 32 * 1024, "the peak grew by \(requests.growthKiB) KiB")
    }
}
