// The runtime facade's handoff across real processes: the `RecoveryIntegrationFixture` executable runs
// `--api runtime` (AgentRuntime, a wrapper backend delegating the recovery adapter, a purpose-based
// model policy) and exits at the handoff's boundaries.
import CodexCore
import CodexSchema
import CodexTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct RecoveryIntegrationProcessTests {
    private static let fixture = ChildProcess.product("RecoveryIntegrationFixture")

    /// A complete stream carrying the fixture's verdict.
    private static func verdictReply() -> ScriptedReply {
        let item: JSONValue = [
            "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [["type": "output_text", "text": #"{"ok":true,"reason":"The carrier confirmed pickup."}"#]],
        ]
        let events = [
            #"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress"}}"#,
            #"{"type":"response.output_item.done","sequence_number":1,"output_index":0,"item":\#(item.canonicalString())}"#,
            #"{"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","status":"completed"}}"#,
        ]
        return .sse(events.map { "data: \($0)\n\n" })
    }

    @Test func exitsAfterTheReceiptAndAfterTheCommitThenTwoFreshProcessesFinishWithOneCommitAndOneGeneration() async throws {
        let directory = try temporaryDirectory("recovery-process")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer { _ in Self.verdictReply() }
        defer { server.shutdown() }
        let host = directory.appendingPathComponent("host.json")
        let arguments = [
            "--api", "runtime", "--store", directory.appendingPathComponent("recovery").path, "--host", host.path,
            "--base-url", server.baseURL.appendingPathComponent("v1").absoluteString,
        ]
        let afterReceipt = try await ChildProcess.run(Self.fixture, arguments + ["--exit-after", "receipt"])
        #expect(afterReceipt.status == 73, "\(afterReceipt.stderr)")
        let afterCommit = try await ChildProcess.run(Self.fixture, arguments + ["--exit-after", "commit"])
        #expect(afterCommit.status == 74, "\(afterCommit.stderr)")
        let finished = try await ChildProcess.run(Self.fixture, arguments)
        #expect(finished.status == 0, "\(finished.stderr)")
        let again = try await ChildProcess.run(Self.fixture, arguments)
        #expect(again.status == 0, "\(again.stderr)")

        let state = try JSONValue(parsing: Array(try Data(contentsOf: host)))
        #expect(state["commitCount"]?.numberValue?.intValue == 1, "the host committed exactly once")
        #expect(state["acknowledged"]?.boolValue == true)
        #expect(state["committedReason"]?.stringValue == "The carrier confirmed pickup.")
        #expect(server.requests.count == 1, "exactly one generation request over four processes")
        let body = try JSONValue(parsing: try #require(server.requests.first?.body))
        #expect(body["model"]?.stringValue == "gpt-6-astra", "the wrapper's purpose policy chose the model")
        #expect(body["tools"]?.arrayValue?.isEmpty == true)
        #expect(!String(decoding: try #require(server.requests.first?.body), as: UTF8.self).contains("shipping-decision"))
    }
}
