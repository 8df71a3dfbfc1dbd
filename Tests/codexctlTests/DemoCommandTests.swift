import Foundation
import Testing

@Suite struct DemoCommandTests {
    @Test func theOfflineDemoRunsItsFiveTurnsAndKeepsTheStateAcrossARestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let database = directory.appendingPathComponent("state.sqlite").path
        let run = try await CommandRunner.codexctl(["demo", "--db", database])
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.contains("   tool call: lookup_order {\"order_id\":\"A-1\"}"))
        #expect(lines.contains("   tool result: Order A-1: shipped with DHL on Friday, arriving Tuesday."))
        #expect(lines.contains("   assistant: Order A-1 shipped with DHL and arrives on Tuesday."))
        #expect(lines.contains("   DemoShippingReply(subject: \"Your order A-1 is on its way\", urgency: \"medium\")"))
        #expect(lines.contains("   committed payload: urgency medium, 133 bytes"))
        #expect(lines.contains("   visible text (framing stripped): Here is a reply you can send. / Want a shorter one?"))
        #expect(lines.contains("   started: lookup_order {\"order_id\":\"B-2\"}"))
        #expect(lines.contains("   started: estimate_delivery {\"order_id\":\"B-2\",\"postcode\":\"0150\"}"))
        #expect(lines.contains("   assistant: Order B-2 is packed and should arrive Thursday."))
        // The peak is what the tools measured (the runtime's concurrency itself is proven by ToolExecutionTests).
        #expect(lines.contains { $0.hasPrefix("   finished: estimate_delivery, lookup_order; peak concurrency observed by the tools: ") })
        #expect(Array(lines.drop { $0 != "   steer accepted mid-reply: List the most recent order first." }.prefix(5)) == [
            "   steer accepted mid-reply: List the most recent order first.",
            "   assistant: Both orders are on their way.",
            "   user: List the most recent order first.",
            "   assistant: Most recent first: B-2 arrives Thursday; A-1 arrived Tuesday.",
            "   the next model request of the same turn carried the steer: yes",
        ])
        #expect(lines.contains("After a restart: thread \"Order A-1\" has 30 history items (12 messages), latest turn completed; the model was asked 8 times."))
        #expect(!run.stdout.contains("codexkit_structured_output"))
        // The database outlives the run and passes the store's own check.
        let check = try await CommandRunner.codexctl(["db", "check", "--db", database])
        #expect(check.status == 0)
    }
}
