import CodexCore
import CodexSchema
@testable import CodexStorageSQLite
import Foundation
import Testing

/// History rows written by earlier versions stay readable: `Fixtures/history-json-rows.sqlite` was
/// written by the store when rows were compact JSON (`{"k":"message",…}`), before the binary row form.
/// To write it again from a build that still writes JSON rows, run this suite with
/// `CODEXKIT_WRITE_HISTORY_FIXTURE=<path>`.
@Suite struct SQLiteHistoryRowFormatTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures").appendingPathComponent("history-json-rows.sqlite")

    static let thread = AgentThreadID(rawValue: "thread-fixture")

    /// Every kind of item with every optional field, present and absent.
    static let items: [AgentHistoryItem] = {
        let at = Date(timeIntervalSinceReferenceDate: 800_000_000.123_456_7)
        let call = ToolInvocation(
            id: ToolInvocationID(rawValue: "call_1"), toolName: "lookup", arguments: #"{"q":"é"}"#,
            threadID: thread, turnID: AgentTurnID(rawValue: "turn-1")
        )
        return [
            .message(AgentMessage(id: AgentMessageID(rawValue: "m1"), threadID: thread, role: .user, text: "Hello \"world\"\n😀", createdAt: at)),
            .message(AgentMessage(
                id: AgentMessageID(rawValue: "m2"), threadID: thread, role: .assistant, text: "", phase: .finalAnswer,
                structuredOutput: AgentStructuredOutputMetadata(formatName: "draft", payload: ["subject": "Late", "count": 9_007_199_254_740_993]),
                createdAt: at.addingTimeInterval(1)
            )),
            .message(AgentMessage(id: AgentMessageID(rawValue: "m3"), threadID: thread, role: AgentMessageRole(rawValue: "developer"), text: "x", phase: .commentary, createdAt: at)),
            .toolCall(call),
            .toolCall(ToolInvocation(id: ToolInvocationID(rawValue: "call_2"), toolName: "t", arguments: "{}")),
            .toolResult(ToolResultEnvelope(
                invocationID: call.id, toolName: "lookup", status: .success,
                content: [.text("found"), .image(URL(string: "https://example.com/a.png?x=1") ?? URL(fileURLWithPath: "/"))],
                session: ToolSessionDescriptor(id: "s1", title: "Session")
            )),
            .toolResult(ToolResultEnvelope(invocationID: ToolInvocationID(rawValue: "call_2"), toolName: "t", status: .failure, content: [], session: ToolSessionDescriptor(id: "s2"))),
            .toolResult(.failure(call, message: "no")),
            .reasoning(AgentReasoningItem(itemID: "r1", summary: ["a", "b"], encryptedContent: "enc==")),
            .reasoning(AgentReasoningItem(itemID: "r2")),
            .systemEvent(AgentSystemEvent(type: .turnFailed, turnID: AgentTurnID(rawValue: "turn-1"), occurredAt: at, errorCode: "rate_limited")),
            .systemEvent(AgentSystemEvent(type: .turnCompleted, turnID: AgentTurnID(rawValue: "turn-2"), occurredAt: Date(timeIntervalSinceReferenceDate: -1.5))),
        ]
    }()

    @Test(.enabled(if: ProcessInfo.processInfo.environment["CODEXKIT_WRITE_HISTORY_FIXTURE"] != nil))
    func writeTheFixture() async throws {
        let path = try #require(ProcessInfo.processInfo.environment["CODEXKIT_WRITE_HISTORY_FIXTURE"])
        let store = try SQLiteRuntimeStateStore(path: path)
        try await store.upsertThread(AgentThread(id: Self.thread, title: "fixture"))
        try await store.appendHistory(Self.items, to: Self.thread)
        try store.checkpoint()
    }

    @Test func rowsWrittenAsJSONByEarlierVersionsAreRestoredExactly() async throws {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-history-fixture-\(UUID().uuidString).sqlite")
        try FileManager.default.copyItem(at: Self.fixture, to: copy)
        defer { try? FileManager.default.removeItem(at: copy) }
        let store = try SQLiteRuntimeStateStore(path: copy.path)
        #expect(try store.schemaVersion == SQLiteStateSchema.schema.migrations.count)
        #expect(try await store.integrityCheck() == ["ok"])
        let restored = try await store.history(of: Self.thread, query: AgentHistoryQuery(limit: 100)).items
        #expect(restored == Self.items)
        // New rows appended after old ones read back alongside them.
        let later = AgentHistoryItem.message(AgentMessage(id: AgentMessageID(rawValue: "m4"), threadID: Self.thread, role: .user, text: "later", createdAt: Date(timeIntervalSinceReferenceDate: 3)))
        try await store.appendHistory([later], to: Self.thread)
        #expect(try await store.history(of: Self.thread, query: AgentHistoryQuery(limit: 100)).items == Self.items + [later])
    }
}
