import CodexCore
import CodexKitTesting
import CodexRuntime
import CodexSchema
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// Docs/DurableTurns.md's examples, as written: the page shows exactly the code below, and it runs
/// against a real SQLite file.
@Suite struct DurableTurnsDocumentationTests {
    @Test func theDurableTurnsPageExampleRunsAsWritten() async throws {
        let directory = try temporaryDirectory("durable-turns-doc")
        defer { try? FileManager.default.removeItem(at: directory) }
        let databasePath = directory.appendingPathComponent("state.sqlite").path
        // example 1

        /// A payment service that refunds each idempotency key once, as real payment APIs do.
        actor Payments {
            private(set) var refunds: [String] = []
            func refund(idempotencyKey: String) {
                if !refunds.contains(idempotencyKey) { refunds.append(idempotencyKey) }
            }
        }

        func refundAfterApproval(databasePath: String) async throws -> (reply: String, refunds: Int) {
            let payments = Payments()
            let refund = AgentTool(definition: ToolDefinition(
                name: "refund_order", description: "Refund an order.", inputSchema: ["type": "object"], approvalPolicy: .requiresApproval
            )) { _, context in
                await payments.refund(idempotencyKey: context.idempotencyKey)
                return context.success("refunded")
            }
            // The model asks for the refund, then answers once it has the result.
            let model = FixtureAgentBackend(turns: [
                .init([
                    .event(.toolCallRequested(ToolInvocation(id: ToolInvocationID(rawValue: "call_1"), toolName: "refund_order", arguments: "{}"))),
                    .awaitToolResults, .complete(),
                ]),
                .reply("Order A-1 is refunded."),
            ])
            func makeRuntime() throws -> AgentRuntime {
                try AgentRuntime(configuration: .init(
                    backend: model, stateStore: try SQLiteRuntimeStateStore(path: databasePath), tools: [refund],
                    turnRecovery: .resume(unfinishedCalls: .reportUnknownOutcome) { _ in true }
                ))
            }

            // The process that started the turn has no one to ask: the turn parks, and the process may exit.
            let first = try makeRuntime()
            let thread = try await first.createThread(title: "Refunds")
            do {
                let reply = try await first.send(Request(text: "Refund order A-1."), in: thread.id)
                return (reply, await payments.refunds.count)   // not reached: there is no presenter to approve
            } catch let error as AgentRuntimeError where error.code == .turnWaitingForApproval {
                // Parked: the approval is in the store, the turn is `waiting_for_approval`.
            }

            // Any process on the same store, later: a person approves (`codexctl approvals approve` does
            // the same), and the turn continues where it stopped.
            let second = try makeRuntime()
            guard let pending = try await second.approvals(in: thread.id).first(where: \.isPending) else { return ("", 0) }
            try await second.answerApproval(pending.id, .approved)
            let execution = try await second.resumeTurn(pending.request.turnID, in: thread.id)
            var reply = ""
            for try await event in execution.events {
                if case .assistantMessageDelta(_, _, let delta) = event { reply += delta }
            }
            return (reply, await payments.refunds.count)
        }
        // end
        let outcome = try await refundAfterApproval(databasePath: databasePath)
        #expect(outcome.reply == "Order A-1 is refunded.")
        #expect(outcome.refunds == 1)
        // The stored history is the uninterrupted turn's: the request, the call, its result, the reply.
        let store = try SQLiteRuntimeStateStore(readingAt: databasePath)
        let thread = try #require(try await store.threads().first)
        let items = try await store.history(of: thread.id, query: AgentHistoryQuery()).items.compactMap { item -> String? in
            switch item {
            case .message(let message): "\(message.role.rawValue): \(message.text)"
            case .toolCall(let call): "call \(call.toolName)"
            case .toolResult(let result): "result \(result.status.rawValue)"
            default: nil
            }
        }
        #expect(items == ["user: Refund order A-1.", "call refund_order", "result success", "assistant: Order A-1 is refunded."])
        #expect(thread.status == .idle)
    }

    @Test func theDurableTurnsPageShowsExactlyTheTestedExamples() throws {
        let page = try DocumentationExamples.page("Docs/DurableTurns.md")
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let documented = DocumentationExamples.withoutImports(DocumentationExamples.swiftBlocks(inPage: page, section: "## A refund that waits for a person"))
        #expect(documented == DocumentationExamples.examples(inSource: source))
    }
}
