// StorageFixture: appends turns to a SQLite state store from a separate process, for the storage
// concurrency and crash tests. Each turn is one appendHistory call (one transaction) of six items.
//   --db PATH --thread UUID --writer NAME [--seconds S | --turns N]
// Prints the number of turns it appended; exits 1 with the error on any failure.
import CodexCore
import CodexStorageSQLite
import Foundation

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func run() async throws -> Int {
    guard let path = option("--db"), let threadText = option("--thread"), let writer = option("--writer") else {
        throw SQLiteStoreError(code: .failure, message: "usage: --db PATH --thread UUID --writer NAME [--seconds S | --turns N]")
    }
    let store = try SQLiteRuntimeStateStore(path: path)
    let thread = AgentThreadID(rawValue: threadText)
    if try await store.thread(thread) == nil {
        try await store.upsertThread(AgentThread(id: thread, title: "shared"))
    }
    let deadline = Date().addingTimeInterval(Double(option("--seconds") ?? "0") ?? 0)
    let limit = Int(option("--turns") ?? "") ?? .max
    var turns = 0
    while turns < limit, limit != .max || Date() < deadline {
        let turn = AgentTurnID()
        let call = ToolInvocation(id: ToolInvocationID(rawValue: "\(writer)-call-\(turns)"), toolName: "lookup", arguments: #"{"n":\#(turns)}"#)
        try await store.appendHistory([
            .message(AgentMessage(threadID: thread, role: .user, text: "\(writer) turn \(turns)")),
            .reasoning(AgentReasoningItem(itemID: "\(writer)-rs-\(turns)", summary: ["s"], encryptedContent: "gAAA")),
            .toolCall(call),
            .toolResult(.success(call, text: "result \(turns)")),
            .message(AgentMessage(threadID: thread, role: .assistant, text: "\(writer) answer \(turns)", phase: .finalAnswer)),
            .systemEvent(AgentSystemEvent(type: .turnCompleted, turnID: turn)),
        ], to: thread)
        turns += 1
    }
    return turns
}

do {
    print(try await run())
    exit(0)
} catch {
    FileHandle.standardError.write(Data("storage fixture: \(error)\n".utf8))
    exit(1)
}
