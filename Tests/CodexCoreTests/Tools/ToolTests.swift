import CodexCore
import CodexSchema
import Foundation
import Synchronization
import Testing

@Suite struct ToolTests {
    @Test(arguments: [("lookup_product", true), ("a-b_9", true), ("", false), ("has space", false), ("ünï", false), ("x.y", false)])
    func toolNamesFollowTheWirePattern(name: String, valid: Bool) {
        let tool = ToolDefinition(name: name, description: "d", inputSchema: ["type": "object"])
        if valid {
            #expect(throws: Never.self) { try tool.validate() }
        } else {
            let error = #expect(throws: AgentRuntimeError.self) { try tool.validate() }
            #expect(error?.code == .invalidToolDefinition)
        }
    }

    @Test func wireParametersAlwaysHaveProperties() {
        let bare = ToolDefinition(name: "t", description: "d", inputSchema: ["type": "object"])
        #expect(bare.wireParameters == ["type": "object", "properties": [:]])
        let full = ToolDefinition(name: "t", description: "d", inputSchema: .object(["type": .string("object"), "properties": .object(["a": ["type": "string"]])]))
        #expect(full.wireParameters == full.inputSchema)
        #expect(full.approvalPolicy == .automatic)
        #expect(full.supportsParallelExecution == false)
    }

    @Test func resultTextJoinsNonEmptyBlocksWithBlankLines() throws {
        let envelope = ToolResultEnvelope(
            invocationID: "call_1", toolName: "t", status: .success,
            content: [.text(""), .text("first"), .image(URL(fileURLWithPath: "/tmp/x.png")), .text("second")]
        )
        #expect(envelope.primaryText == "first")
        #expect(envelope.joinedText == "first\n\nsecond")
        let invocation = ToolInvocation(id: "call_1", toolName: "t", arguments: #"{"a":[1,2]}"#)
        #expect(envelope.matches(invocation))
        #expect(!ToolResultEnvelope.denied(ToolInvocation(id: "call_2", toolName: "t", arguments: "{}")).matches(invocation))
        #expect(try invocation.parsedArguments() == ["a": [1, 2]])
        #expect(ToolResultEnvelope.failure(invocation, message: "boom").status == .failure)
    }

    @Test func approvalsAndResultsRoundTrip() throws {
        let invocation = ToolInvocation(id: "c", toolName: "t", arguments: "{}", threadID: "th", turnID: "tu")
        let request = AgentApprovalRequest(threadID: "th", turnID: "tu", toolInvocation: invocation, title: "Run t?")
        #expect(try JSONDecoder().decode(AgentApprovalRequest.self, from: JSONEncoder().encode(request)) == request)
        let envelope = ToolResultEnvelope.success(invocation, text: "ok")
        #expect(try JSONDecoder().decode(ToolResultEnvelope.self, from: JSONEncoder().encode(envelope)) == envelope)
    }
}

@Suite struct RateLimitTests {
    @Test func familiesAreNormalizedAndWindowsComputeRemaining() throws {
        let snapshot = AgentRateLimitSnapshot(limitID: "Codex-Other", primary: .init(usedPercent: 42.5, windowDurationMinutes: 300), credits: .init(hasCredits: true, balance: "12.50"))
        #expect(snapshot.limitID == "codex_other")
        #expect(snapshot.primary?.remainingPercent == 57.5)
        #expect(AgentRateLimitWindow(usedPercent: 130).remainingPercent == 0)
        #expect(try JSONDecoder().decode(AgentRateLimitSnapshot.self, from: JSONEncoder().encode(snapshot)) == snapshot)
    }

    @Test func usageNeverTreatsUnknownAsZero() {
        let known = AgentUsage(inputTokens: 10, outputTokens: 5)
        #expect(known.derivedTotalTokens == 15)
        #expect(AgentUsage(inputTokens: 10).derivedTotalTokens == nil)
        #expect(AgentUsage(totalTokens: 99).derivedTotalTokens == 99)
        let sum = known + AgentUsage(inputTokens: 1, cachedInputTokens: 1, outputTokens: 1)
        #expect(sum.inputTokens == 11)
        #expect(sum.outputTokens == 6)
        #expect(sum.cachedInputTokens == nil)
    }
}

@Suite struct AgentTurnStreamSubmissionTests {
    @Test func aResultForAnotherCallIsRefusedBeforeTheBackendSeesIt() async throws {
        let received = Counter()
        let stream = AgentTurnStream(events: AsyncThrowingStream { $0.finish() }, submitToolResult: { _ in received.increment() })
        let call = ToolInvocation(id: "c1", toolName: "lookup", arguments: "{}")
        let other = ToolInvocation(id: "c2", toolName: "lookup", arguments: "{}")
        let error = await #expect(throws: AgentRuntimeError.self) { try await stream.submit(.success(other, text: "x"), for: call) }
        #expect(error?.code == .invalidToolResult)
        let renamed = ToolResultEnvelope(invocationID: "c1", toolName: "weather", status: .success, content: [.text("x")])
        await #expect(throws: AgentRuntimeError.self) { try await stream.submit(renamed, for: call) }
        #expect(received.count == 0)
        try await stream.submit(.success(call, text: "ok"), for: call)
        #expect(received.count == 1)
    }
}

/// Counts calls.
final class Counter: Sendable {
    private let value = Mutex(0)
    var count: Int { value.withLock { $0 } }
    func increment() { value.withLock { $0 += 1 } }
}
