import CodexCore
@testable import CodexRuntime
import CodexSchema
import CodexTestSupport
import Foundation
import Synchronization
import Testing

/// The client against the official Python SDK's servers (`mcp` 2.3.0), over stdio.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct MCPStdioServerTests {
    @Test func connectsStatelessListsAndCallsTools() async throws {
        let client = try MCPClient(try await MCPServers.stdio("reference", script: "reference_server.py"))
        let description = try await client.connect()
        #expect(description.era == .stateless(version: "2026-07-28"))
        #expect(description.name == "reference-server" && description.version == "1.0.0")
        #expect(description.instructions == "Reference server for CodexKit's tests.")
        #expect(description.announcesToolListChanges)

        let tools = try await client.listTools()
        #expect(tools.map(\.name).sorted() == ["add", "add_tool", "cancelled_count", "code_check", "count_to", "delete_note", "echo", "failing", "leak", "lookup", "picture", "regional", "slow"])
        let delete = try #require(tools.first { $0.name == "delete_note" })
        #expect(delete.annotations == MCPToolAnnotations(title: "Delete a note", readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false))
        #expect(delete.title == "Delete a note")
        #expect(tools.first { $0.name == "lookup" }?.annotations.readOnlyHint == true)
        #expect(tools.first { $0.name == "add" }?.outputSchema?["properties"]?["result"]?["type"] == "integer")

        #expect(try await client.callTool("echo", arguments: ["text": "héllo\nworld"]) == MCPToolResult(content: [.text("héllo\nworld")]))
        let sum = try await client.callTool("add", arguments: ["a": 2, "b": 3])
        #expect(sum.structuredContent == ["result": 5] && !sum.isError && sum.content == [.text("5")])
        let picture = try await client.callTool("picture")
        guard case .image(let png, let mimeType)? = picture.content.first else {
            Issue.record("no image block")
            return
        }
        #expect(mimeType == "image/png" && Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(AgentImageAttachment.completeImageMimeType(png) == "image/png")
        let failing = try await client.callTool("failing")
        #expect(failing.isError && failing.content == [.text("Error executing tool failing: this tool always fails")])
        try await client.ping()
        #expect(client.processStarts == 1)

        let pid = try #require(client.processIdentifier)
        await client.shutdown()
        #expect(!MCPServers.exists(pid))
        await #expect(throws: MCPError.self) { try await client.callTool("echo", arguments: ["text": "x"]) }
        do {
            _ = try await client.listTools()
        } catch let error as MCPError {
            #expect(error.code == .closed && error.server == "reference")
        }
    }

    /// A caller cancelled while the server starts leaves the start to the client: the next caller uses
    /// the server it started (one process), and shutdown ends it before returning.
    @Test func aStartACancelledCallerLeftIsTheNextCallersAndShutdownEndsIt() async throws {
        let client = try MCPClient(try await MCPServers.stdio("reference", script: "reference_server.py"))
        let first = Task { try await client.connect() }
        first.cancel()
        _ = await first.result
        #expect(try await client.callTool("echo", arguments: ["text": "after"]) == MCPToolResult(content: [.text("after")]))
        #expect(client.processStarts == 1)
        let pid = try #require(client.processIdentifier)
        await client.shutdown()
        #expect(!MCPServers.exists(pid), "the server ended before shutdown returned")
    }

    @Test func reportsProgressAndCancelsACallTheServerStops() async throws {
        let log = WaitingLogSink()
        let client = try MCPClient(try await MCPServers.stdio("reference", script: "reference_server.py"), logSink: log)
        defer { Task { await client.shutdown() } }
        let steps = Signal()
        let seen = Mutex<[MCPProgress]>([])
        let call = Task {
            try await client.callTool("slow", arguments: ["steps": 3]) { progress in
                seen.withLock { $0.append(progress) }
                steps.fire()
            }
        }
        await steps.wait(count: 3)
        #expect(seen.withLock { $0 } == (1...3).map { MCPProgress(progress: Double($0), total: 3, message: "step \($0)/3") })
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        // The server was told (notifications/cancelled) and stopped the tool.
        let cancelledLine = await log.stderrLine(containing: "slow: cancelled")
        #expect(cancelledLine == "slow: cancelled")
        // The connection is still good.
        #expect(try await client.callTool("echo", arguments: ["text": "after"]).content == [.text("after")])
        #expect(client.processStarts == 1)
    }

    @Test func refreshesTheToolListWhenTheServerAnnouncesAChange() async throws {
        let client = try MCPClient(try await MCPServers.stdio("reference", script: "reference_server.py"))
        defer { Task { await client.shutdown() } }
        let changed = Signal()
        client.onToolListChange { changed.fire() }
        #expect(try await client.listTools().contains { $0.name == "greeter" } == false)
        #expect(try await client.callTool("add_tool", arguments: ["name": "greeter"]).content == [.text("added tool greeter")])
        await changed.wait()
        #expect(try await client.listTools().contains { $0.name == "greeter" })
        #expect(try await client.callTool("greeter").content == [.text("hello from greeter")])
    }

    @Test func followsPaginationToTheLastPage() async throws {
        let client = try MCPClient(try await MCPServers.stdio("paged", script: "paged_server.py"))
        defer { Task { await client.shutdown() } }
        #expect(try await client.listTools().map(\.name) == ["tool_1", "tool_2", "tool_3", "tool_4", "tool_5"])
        #expect(try await client.callTool("tool_4").content == [.text("called tool_4")])
    }

    @Test func redactsSecretsInTheServersStandardError() async throws {
        let secret = "sk-test-0123456789abcdef0123"
        let log = WaitingLogSink()
        let client = try MCPClient(try await MCPServers.stdio("reference", script: "reference_server.py", environment: ["REFERENCE_TOKEN": secret]), logSink: log)
        defer { Task { await client.shutdown() } }
        #expect(try await client.callTool("leak").content == [.text("leaked")])
        let line = await log.stderrLine(containing: "token is")
        #expect(line == "token is <redacted>")
        #expect(!log.events.contains { $0.message.contains(secret) || $0.metadata.values.contains { $0.contains(secret) } })
    }

    @Test func theServerDoesNotInheritCredentialsFromThisProcess() throws {
        let configuration = MCPServerConfiguration(name: "x", transport: .stdio(command: "x"))
        let environment = configuration.childEnvironment(["EXTRA": "1"], from: ["PATH": "/bin", "HOME": "/root", "OPENAI_API_KEY": "sk-x", "CODEX_TOKEN": "t"])
        #expect(environment == ["PATH": "/bin", "HOME": "/root", "EXTRA": "1"])
    }
}
