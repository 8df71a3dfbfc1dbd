import CodexCore
@testable import CodexRuntime
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization
import Testing

/// The client against the official Python SDK's servers over Streamable HTTP, through the default HTTP
/// client: the stateless revision and the handshake revision with its session.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct MCPHTTPServerTests {
    private func configuration(_ server: MCPHTTPTestServer, revisions: MCPServerConfiguration.Revisions = .automatic, recorder: RecordingMiddleware) -> MCPServerConfiguration {
        MCPServerConfiguration(
            name: "web", transport: .streamableHTTP(url: server.url, headers: ["X-Host-Tag": "tests"], bearerToken: "test-token-0123456789"),
            connectTimeout: .seconds(60), revisions: revisions, middlewares: [recorder]
        )
    }

    @Test func statelessRequestsCarryTheirHeadersAndCancelByClosingTheStream() async throws {
        let server = try await MCPHTTPTestServer.start("reference_server.py")
        let recorder = RecordingMiddleware()
        let client = try MCPClient(configuration(server, recorder: recorder))
        #expect(try await client.connect().era == .stateless(version: "2026-07-28"))
        #expect(try await client.listTools().contains { $0.name == "regional" })
        #expect(try await client.callTool("echo", arguments: ["text": "über"]).content == [.text("über")])
        // The server refuses a call without the mirrored Mcp-Param-Region header (-32020).
        #expect(try await client.callTool("regional", arguments: ["region": "eu-west"]).content == [.text("region eu-west")])
        #expect(try await client.callTool("add", arguments: ["a": 20, "b": 22]).structuredContent == ["result": 42])

        let call = try #require(recorder.posts("tools/call").first)
        #expect(call.headers["Authorization"] == "Bearer test-token-0123456789")
        #expect(call.headers["MCP-Protocol-Version"] == "2026-07-28" && call.headers["Mcp-Method"] == "tools/call" && call.headers["Mcp-Name"] == "echo")
        #expect(call.headers["Accept"] == "application/json, text/event-stream" && call.headers["X-Host-Tag"] == "tests")
        #expect(recorder.posts("tools/call").last?.headers["Mcp-Name"] == "add")
        #expect(recorder.posts("tools/call").dropFirst().first?.headers["Mcp-Param-Region"] == "eu-west")

        let steps = Signal()
        let call2 = Task { try await client.callTool("slow", arguments: ["steps": 2]) { _ in steps.fire() } }
        await steps.wait(count: 2)
        call2.cancel()
        await #expect(throws: CancellationError.self) { try await call2.value }
        // The closed stream is the cancellation: the server stops the tool (polled through a tool).
        var cancelled = ""
        for _ in 0..<1_500 where cancelled != "1" {
            if case .text(let text)? = try await client.callTool("cancelled_count").content.first { cancelled = text }
            if cancelled != "1" { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(cancelled == "1")
        #expect(recorder.posts("notifications/cancelled").isEmpty)
        await client.shutdown()
        await server.stop()
    }

    @Test func statelessListChangesArriveOnTheSubscriptionStream() async throws {
        let server = try await MCPHTTPTestServer.start("reference_server.py")
        let client = try MCPClient(configuration(server, recorder: RecordingMiddleware()))
        let changed = Signal()
        client.onToolListChange { changed.fire() }
        #expect(try await client.listTools().contains { $0.name == "web_tool" } == false)
        _ = try await client.callTool("add_tool", arguments: ["name": "web_tool"])
        await changed.wait()
        #expect(try await client.callTool("web_tool").content == [.text("hello from web_tool")])
        await client.shutdown()
        await server.stop()
    }

    @Test func aHandshakeSessionIsKeptRenewedWhenTheServerEndsItAndDeleted() async throws {
        let server = try await MCPHTTPTestServer.start("reference_server.py")
        let recorder = RecordingMiddleware()
        let client = try MCPClient(configuration(server, revisions: .handshakeOnly, recorder: recorder))
        #expect(try await client.connect().era == .handshake(version: "2025-11-25"))
        let first = try #require(client.sessionIdentifier)
        #expect(try await client.callTool("echo", arguments: ["text": "one"]).content == [.text("one")])
        #expect(recorder.posts("tools/call").first?.headers["Mcp-Session-Id"] == first)
        #expect(recorder.posts("tools/call").first?.headers["MCP-Protocol-Version"] == "2025-11-25")
        #expect(recorder.posts("initialize").first?.headers["MCP-Protocol-Version"] == nil)
        try await client.ping()

        let changed = Signal()
        client.onToolListChange { changed.fire() }
        _ = try await client.callTool("add_tool", arguments: ["name": "session_tool"])
        await changed.wait()
        #expect(try await client.listTools().contains { $0.name == "session_tool" })

        // The server ends the session behind the client's back: the next call starts a new one.
        var delete = HTTPRequest(method: "DELETE", url: server.url)
        delete.headers["Mcp-Session-Id"] = first
        delete.headers["MCP-Protocol-Version"] = "2025-11-25"
        let deleted = try await DefaultHTTPClient().send(delete)
        deleted.body.cancel()
        #expect(deleted.statusCode == 200)
        #expect(try await client.callTool("echo", arguments: ["text": "two"]).content == [.text("two")])
        let second = try #require(client.sessionIdentifier)
        #expect(second != first && client.processStarts == 2)

        await client.shutdown()
        #expect(recorder.requests.last?.method == "DELETE" && recorder.requests.last?.headers["Mcp-Session-Id"] == second)
        await server.stop()
    }

    @Test func followsPaginationOverHTTP() async throws {
        let server = try await MCPHTTPTestServer.start("paged_server.py")
        let client = try MCPClient(configuration(server, recorder: RecordingMiddleware()))
        #expect(try await client.listTools().map(\.name) == ["tool_1", "tool_2", "tool_3", "tool_4", "tool_5"])
        #expect(try await client.callTool("tool_5").content == [.text("called tool_5")])
        await client.shutdown()
        await server.stop()
    }
}

extension MCPHTTPServerTests {
    @Test func aReplyStreamThatBreaksIsResumedFromItsLastEvent() async throws {
        let server = try await MCPHTTPTestServer.start("hostile_http_server.py")
        let recorder = RecordingMiddleware()
        let client = try MCPClient(configuration(server, revisions: .handshakeOnly, recorder: recorder))
        let progress = Mutex<[Double]>([])
        let result = try await client.callTool("poke") { report in progress.withLock { $0.append(report.progress) } }
        #expect(result.content == [.text("resumed")])
        #expect(progress.withLock { $0 } == [1, 2])
        let resumed = recorder.requests.filter { $0.method == "GET" && $0.headers["Last-Event-ID"] != nil }
        #expect(resumed.map { $0.headers["Last-Event-ID"] } == ["e1"] && resumed.first?.headers["Mcp-Session-Id"] == "session-1")
        await client.shutdown()
        await server.stop()
    }
}
