import CodexCore
import CodexRuntime
import CodexSchema
import CodexStorageSQLite
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Images a tool result names by URL, fetched from the loopback server through the real transport,
/// judged by their bytes, stored in SQLite blob files and read back after a reopen.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct ToolImageTests {
    @Test func onlyCompleteImagesFromSuccessfulRepliesAreAttachedAndSurviveAReopen() async throws {
        let truncated = TestImages.png.prefix(TestImages.png.count - 5)
        let server = try LoopbackHTTPServer { request in
            switch request.path {
            case "/mislabelled.jpg": return .body(Array(TestImages.jpeg), contentType: "text/plain", writeSize: 7)
            case "/page.png": return .body(Array("<!doctype html><p>Not found</p>".utf8), contentType: "image/png", writeSize: 64)
            case "/cut.png": return .body(Array(truncated), contentType: "image/png", writeSize: 64)
            case "/missing.png": return ScriptedReply(status: 404, headers: [.init(name: "Content-Type", value: "image/png")], parts: [.bytes(Array(TestImages.png))])
            default: return .body(Array(TestImages.png), contentType: "image/png", writeSize: 16)
            }
        }
        defer { server.shutdown() }
        let base = server.baseURL
        let chart = AgentTool(definition: ToolDefinition(name: "chart", description: "Draws a chart.", inputSchema: ["type": "object"])) { invocation in
            ToolResultEnvelope(invocationID: invocation.id, toolName: invocation.toolName, status: .success, content: [
                .text("Here is the chart."),
                .image(base.appendingPathComponent("chart.png")),
                .image(base.appendingPathComponent("page.png")),
                .image(base.appendingPathComponent("cut.png")),
                .image(base.appendingPathComponent("missing.png")),
                .image(base.appendingPathComponent("mislabelled.jpg")),
                .image(URL(fileURLWithPath: "/etc/hostname")),
            ])
        }
        let directory = try temporaryDirectory("codexkit-tool-images")
        let path = directory.appendingPathComponent("state.sqlite").path
        let log = InMemoryAgentLogSink()
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.event(.toolCallRequested(call("c1", "chart"))), .awaitToolResults, .complete()])])
        let runtime = try AgentRuntime(configuration: .init(
            backend: backend, stateStore: try SQLiteRuntimeStateStore(path: path), logSink: log, tools: [chart]
        ))
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "chart it"), in: thread.id))
        #expect(error == nil)
        #expect(backend.submittedResults.first?.joinedText == "Here is the chart.")
        #expect(log.events(named: "tools.image.omitted").map { $0.metadata["reason"] ?? "" } == [
            "not_an_image", "truncated_image", "http_404", "unsupported_scheme",
        ])
        let committed = events.compactMap { event -> AgentMessage? in
            if case .messageCommitted(let message) = event, !message.images.isEmpty { return message }
            return nil
        }
        #expect(committed.count == 1)
        #expect(committed.first?.images.map(\.mimeType) == ["image/png", "image/jpeg"])

        let reopened = try SQLiteRuntimeStateStore(path: path)
        let items = try await reopened.history(of: thread.id, query: AgentHistoryQuery(limit: 100)).items
        let stored = items.compactMap { item -> AgentMessage? in
            if case .message(let message) = item, message.role == .assistant, !message.images.isEmpty { return message }
            return nil
        }
        #expect(stored.count == 1)
        #expect(stored.first?.images.map(\.data) == [TestImages.png, TestImages.jpeg])
        #expect(stored.first?.images.map(\.mimeType) == ["image/png", "image/jpeg"])
    }
}
