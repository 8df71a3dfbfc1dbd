import CodexCore
import Foundation
import Testing

@Suite struct AgentHistoryReplayTests {
    let thread = AgentThreadID()
    let turn = AgentTurnID()

    func call(_ id: String) -> ToolInvocation { ToolInvocation(id: ToolInvocationID(rawValue: id), toolName: "lookup", arguments: "{}") }
    func user(_ text: String = "hi") -> AgentHistoryItem { .message(AgentMessage(threadID: thread, role: .user, text: text)) }
    func assistant(_ text: String = "ok") -> AgentHistoryItem { .message(AgentMessage(threadID: thread, role: .assistant, text: text, phase: .finalAnswer)) }
    let reasoning = AgentHistoryItem.reasoning(AgentReasoningItem(itemID: "rs_1", summary: ["think"], encryptedContent: "gAAA"))

    func problem(_ items: [AgentHistoryItem]) -> String? {
        do {
            try AgentHistoryReplay.validate(items)
            return nil
        } catch {
            return error.code == .historyReplayInvalid ? error.message : "wrong code \(error.code)"
        }
    }

    @Test func completeHistoriesPass() {
        let a = call("call_a")
        let b = call("call_b")
        #expect(problem([]) == nil)
        #expect(problem([user(), reasoning, .toolCall(a), .toolCall(b), .toolResult(.success(b, text: "2")), .toolResult(.success(a, text: "1")),
                         reasoning, assistant(), .systemEvent(AgentSystemEvent(type: .turnCompleted, turnID: turn))]) == nil)
    }

    @Test func aHistoryCutMidToolCallIsRefused() {
        let a = call("call_a")
        #expect(problem([user(), .toolCall(a)]) == "history item 1: a tool call has no result")
        #expect(problem([user(), .toolCall(a), user("next")]) == "history item 1: a tool call has no result before the next user message")
    }

    @Test func orphanedResultsDuplicatesAndReasoningAreRefused() {
        let a = call("call_a")
        #expect(problem([user(), .toolResult(.success(a, text: "x"))]) == "history item 1: a tool result has no earlier call")
        #expect(problem([user(), .toolCall(a), .toolResult(.success(a, text: "x")), .toolCall(a)]) == "history item 3: a tool call ID is used twice")
        #expect(problem([user(), reasoning]) == "history item 1: a reasoning item is not followed by the output it belongs to")
        #expect(problem([user(), reasoning, user("again")]) == "history item 1: a reasoning item is not followed by the output it belongs to")
        #expect(problem([user(), reasoning, reasoning, assistant()]) == nil)
        #expect(problem([user(), reasoning, reasoning]) == "history item 1: a reasoning item is not followed by the output it belongs to")
        let secret = "top secret prompt"
        #expect(problem([user(secret), reasoning])?.contains(secret) == false)
    }
}
