@testable import CodexRuntime
import CodexCore
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

private typealias H = BackendHarness

/// Fixes from the backend review: bytes that never become events count against the budget, reasoning
/// is requested only when it is sent, unresolvable reasoning is not replayed, repeated `done` items are
/// ignored, refusals replay as refusals.
@Suite struct CodexResponsesBackendReviewTests {
    @Test func keepAliveCommentsCountAgainstTheByteBudgetAndNeverHang() async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        let comments = String(repeating: ": keep-alive\n", count: 4_000)  // 52,000 bytes, no events
        let server = try LoopbackHTTPServer(replies: [H.holdingReply(script.text + comments)])
        defer { server.shutdown() }
        let backend = try H.backend(server, configuration: .init(maximumResponseBytes: 16 * 1024))
        let (_, error) = await H.drain(try await backend.startTurn(H.turn()))
        let failure = try #require(error as? AgentRuntimeError)
        #expect(failure.executionLimit == .responseBytes)
        #expect(server.requests.count == 1, "a budget is not retried")
    }

    @Test func reasoningAndItsEncryptedContentAreRequestedOnlyTogether() async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        script.messageDone("msg_1", "ok", index: 0)
        script.completed("resp_1")
        let server = try LoopbackHTTPServer(replies: [.sse(script.events), .sse(script.events), .sse(script.events)])
        defer { server.shutdown() }
        let backend = try H.backend(server)
        var unknown = H.turn()
        unknown.model = "my-local-model"
        _ = await H.drain(try await backend.startTurn(unknown))
        var effort = unknown
        effort.reasoningEffort = .high
        _ = await H.drain(try await backend.startTurn(effort))
        _ = await H.drain(try await backend.startTurn(H.turn()))  // gpt-6-astra: in the catalog
        let bodies = try (0..<3).map { try H.body(server, $0) }
        #expect(bodies[0]["reasoning"] == nil)
        #expect(bodies[0]["include"]?.arrayValue?.isEmpty ?? true)
        #expect(bodies[1]["reasoning"]?["effort"]?.stringValue == "high")
        #expect(bodies[1]["include"] == ["reasoning.encrypted_content"])
        #expect(bodies[2]["reasoning"]?["effort"]?.stringValue == "low", "the catalog's default effort for gpt-6-astra")
        #expect(bodies[2]["include"] == ["reasoning.encrypted_content"])
    }

    @Test func reasoningWithoutEncryptedContentIsNotReplayed() {
        let input = ResponsesRequestBuilder.input(for: AgentBackendTurnRequest(
            threadID: H.threadID, turnID: H.turnID, request: Request(text: "next"),
            history: [
                .reasoning(AgentReasoningItem(itemID: "rs_1", summary: ["s"], encryptedContent: nil)),
                .reasoning(AgentReasoningItem(itemID: "rs_2", summary: ["s"], encryptedContent: "")),
                .reasoning(AgentReasoningItem(itemID: "rs_3", summary: ["s"], encryptedContent: "gAAA")),
            ],
            model: .gpt6Astra
        ))
        #expect(input.map(\.jsonValue["type"]) == ["reasoning", "message"])
        #expect(input.first?.jsonValue["encrypted_content"]?.stringValue == "gAAA")
    }

    @Test func aRepeatedDoneItemIsIgnored() async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        script.messageDone("msg_1", "once", index: 0)
        script.messageDone("msg_1", "once", index: 0)
        script.completed("resp_1")
        let server = try LoopbackHTTPServer(replies: [.sse(script.events)])
        defer { server.shutdown() }
        let (events, error) = await H.drain(try await H.backend(server).startTurn(H.turn()))
        #expect(error == nil)
        let completed = events.filter { if case .assistantMessageCompleted = $0 { return true } else { return false } }
        #expect(completed.count == 1)
    }

    @Test func refusalsReplayAsRefusalParts() {
        #expect(ResponsesContentPart.refusal("I can't help with that.").jsonValue == ["type": "refusal", "refusal": "I can't help with that."])
    }
}
