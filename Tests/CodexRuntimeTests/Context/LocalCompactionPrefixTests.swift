@testable import CodexRuntime
import CodexCore
import Foundation
import Testing

/// Which part of a history a local summary request sends when the whole would not fit the model's
/// window: the oldest whole turns that fit three quarters of it, never splitting a turn and never
/// reaching back before an earlier compaction's part.
@Suite struct LocalCompactionPrefixTests {
    private let thread: AgentThreadID = "t"

    /// One turn: its start event, a user message of `bytes` bytes, a tool call and result, a reply.
    private func turn(_ n: Int, bytes: Int) -> [AgentHistoryItem] {
        let id = AgentTurnID(rawValue: "turn-\(n)")
        let call = ToolInvocation(id: ToolInvocationID(rawValue: "call-\(n)"), toolName: "lookup", arguments: "{}", threadID: thread, turnID: id)
        return [
            .systemEvent(AgentSystemEvent(type: .turnStarted, turnID: id)),
            .message(AgentMessage(threadID: thread, role: .user, text: String(repeating: "u", count: bytes))),
            .toolCall(call),
            .toolResult(ToolResultEnvelope(invocationID: call.id, toolName: "lookup", status: .success, content: [.text("ok")])),
            .message(AgentMessage(threadID: thread, role: .assistant, text: "done")),
            .systemEvent(AgentSystemEvent(type: .turnCompleted, turnID: id)),
        ]
    }

    @Test func aHistoryThatFitsOrAnUnknownWindowIsSentWhole() throws {
        let history = turn(1, bytes: 400) + turn(2, bytes: 400)
        let whole = try AgentRuntime.localPrefix(history, history: history, window: nil, instructions: "")
        #expect(whole.items == history && whole.covers == history.count)
        let roomy = try AgentRuntime.localPrefix(history, history: history, window: 100_000, instructions: "")
        #expect(roomy.items == history && roomy.covers == history.count)
    }

    @Test func theOldestWholeTurnsThatFitAreSummarisedAndTheRestStays() throws {
        let history = turn(1, bytes: 400) + turn(2, bytes: 400) + turn(3, bytes: 400)
        // About 103 estimated tokens per turn plus the summary instruction: three quarters of 400 holds two turns.
        let cut = try AgentRuntime.localPrefix(history, history: history, window: 400, instructions: "")
        #expect(cut.items == Array(history[..<12]) && cut.covers == 12)
        #expect(AgentContextEstimator.estimate(cut.items, instructions: AgentContextCompaction.summaryInstruction).estimatedTokens <= 300)
        let one = try AgentRuntime.localPrefix(history, history: history, window: 250, instructions: "")
        #expect(one.covers == 6)
        // Not even the first turn fits: a typed error (the caller stores nothing).
        #expect { try AgentRuntime.localPrefix(history, history: history, window: 100, instructions: "") } throws: { error in
            (error as? AgentRuntimeError)?.code == .compactionUnavailable
        }
    }

    @Test func aCutNeverReachesBackBeforeAnEarlierCompactionsPart() throws {
        // History: turns 1-2, a compaction covering turn 1 only (turn 2 stays replayed), then turns 3-4.
        let record = AgentContextCompaction(
            createdAt: Date(timeIntervalSinceReferenceDate: 0), strategy: .local, replacedItemCount: 6, coversItemsBefore: 6, summary: "s",
            estimatedTokensBefore: 100, estimatedTokensAfter: 1
        )
        let history = turn(1, bytes: 400) + turn(2, bytes: 400) + [.contextCompaction(record)] + turn(3, bytes: 400) + turn(4, bytes: 400)
        let replayed = AgentContextEstimator.replayedItems(history)
        #expect(replayed.count == 1 + 6 + 12)
        // Room for the record, turn 2 and turn 3: the cut falls before turn 4, at its position in the history.
        let cut = try AgentRuntime.localPrefix(replayed, history: history, window: 420, instructions: "")
        #expect(cut.items == Array(replayed[..<13]))
        #expect(cut.covers == 19)
        if case .systemEvent(let event) = history[19] { #expect(event.type == .turnStarted && event.turnID == "turn-4") } else { Issue.record("not a turn start") }
        // Room for less than the record and turn 2: no cut inside the earlier part.
        #expect { try AgentRuntime.localPrefix(replayed, history: history, window: 200, instructions: "") } throws: { error in
            (error as? AgentRuntimeError)?.code == .compactionUnavailable
        }
    }
}
