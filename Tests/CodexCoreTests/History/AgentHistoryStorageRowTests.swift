import CodexCore
import CodexSchema
import Foundation
import Testing

@Suite struct AgentHistoryStorageRowTests {
    static let thread = AgentThreadID(rawValue: "thread-1")
    static let call = ToolInvocation(id: ToolInvocationID(rawValue: "call_1"), toolName: "lookup", arguments: #"{"q":"ü \"x\""}"#,
                                     threadID: thread, turnID: AgentTurnID(rawValue: "turn-1"))

    static let items: [AgentHistoryItem] = [
        .message(AgentMessage(id: "m1", threadID: thread, role: .user, text: "Hi 👋\nthere", createdAt: Date(timeIntervalSinceReferenceDate: 812_345_678.123_456_7))),
        .message(AgentMessage(
            id: "m2", threadID: thread, role: .assistant, text: "{}", images: [.png(Data([0x89, 0x50, 0x4E, 0x47]))], phase: .unknown("summary_v2"),
            structuredOutput: AgentStructuredOutputMetadata(formatName: "verdict", payload: ["ok": true]), createdAt: Date(timeIntervalSinceReferenceDate: 0.1)
        )),
        .message(AgentMessage(id: "m3", threadID: thread, role: .assistant, text: "done", phase: .finalAnswer, createdAt: Date(timeIntervalSinceReferenceDate: -5))),
        .toolCall(call),
        .toolCall(ToolInvocation(id: ToolInvocationID(rawValue: "call_2"), toolName: "t", arguments: "")),
        .toolResult(ToolResultEnvelope(
            invocationID: call.id, toolName: "lookup", status: .failure,
            content: [.text("a"), .image(URL(string: "https://example.com/x.png")!), .text("")], session: ToolSessionDescriptor(id: "s", title: "T")
        )),
        .toolResult(.denied(call)),
        .reasoning(AgentReasoningItem(itemID: "rs", summary: ["one", "two"], encryptedContent: "gAAAA")),
        .reasoning(AgentReasoningItem(itemID: "rs2")),
        .systemEvent(AgentSystemEvent(type: .turnFailed, turnID: "turn-1", occurredAt: Date(timeIntervalSinceReferenceDate: 1e9 + 0.5), errorCode: "quota_exceeded")),
        .systemEvent(AgentSystemEvent(type: AgentSystemEventType(rawValue: "future_event"), turnID: "turn-2", occurredAt: Date(timeIntervalSinceReferenceDate: 3))),
    ]

    @Test(arguments: items.indices)
    func everyKindRoundTripsExactly(index: Int) throws {
        let item = Self.items[index]
        let row = item.storageRow()
        #expect(try AgentHistoryItem(storageRow: row) == item)
        #expect(item.storageRow() == row)
        guard case .object = try JSONValue(parsing: row) else {
            Issue.record("not a JSON object")
            return
        }
    }

    @Test func badRowsAreTypedErrors() {
        for row in ["", "[]", #"{"k":"nope"}"#, #"{"k":"message","id":"m"}"#, #"{"k":"tool_result","id":"c","tool":"t","status":"odd","content":[]}"#] {
            let error = #expect(throws: AgentRuntimeError.self) { try AgentHistoryItem(storageRow: Array(row.utf8)) }
            #expect(error?.code == .storageFailure)
        }
    }
}
