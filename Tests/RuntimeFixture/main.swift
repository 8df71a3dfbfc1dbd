// RuntimeFixture: a host application that starts a turn and then hangs mid-turn, so the runtime crash
// test can kill it with SIGKILL and restart on the same SQLite state store.
//   --db PATH --thread ID --text TEXT            (the SQLite store)
//   --postgres URL --schema S --thread ID --text TEXT   (the PostgreSQL store: a replica)
// Runs until killed; exits 1 with the error on any failure.
// `soak-compaction …` instead runs the long-thread compaction soak (CompactionSoak.swift) and exits;
// `soak …` runs the fault-injecting runtime soak (Soak.swift) and exits; `durable …` runs or resumes the
// durable-turn script and can be killed at a journal boundary (DurableTurn.swift); `mcp-memory …` measures
// the MCP client's peak memory against a hostile server (MCPMemory.swift); `usage-memory …` the usage
// ledger's summary's (UsageMemory.swift).
import CodexCore
import CodexKitTesting
import CodexRuntime
import CodexStoragePostgres
import CodexStorageSQLite
import Foundation

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func run() async throws {
    guard let threadText = option("--thread"), let text = option("--text") else {
        throw AgentRuntimeError(code: .invalidRequest, message: "usage: (--db PATH | --postgres URL --schema S) --thread ID --text TEXT")
    }
    let store: any RuntimeStateStore
    if let url = option("--postgres") {
        store = try await PostgresRuntimeStateStore(connectionString: url, schema: option("--schema") ?? "codexkit")
    } else if let path = option("--db") {
        store = try SQLiteRuntimeStateStore(path: path)
    } else {
        throw AgentRuntimeError(code: .invalidRequest, message: "usage: (--db PATH | --postgres URL --schema S) --thread ID --text TEXT")
    }
    let threadID = AgentThreadID(rawValue: threadText)
    if try await store.thread(threadID) == nil {
        try await store.upsertThread(AgentThread(id: threadID, title: "crash test"))
    }
    // The model streams a little, then never finishes: the process is killed mid-turn.
    let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.event(.assistantMessageDelta("half an ans")), .hang])])
    let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: store, turnLimits: .unlimited))
    for try await event in try await runtime.stream(Request(text: text), in: threadID) {
        if case .assistantMessageDelta = event {
            FileHandle.standardOutput.write(Data("streaming\n".utf8))
        }
    }
}

do {
    switch CommandLine.arguments.dropFirst().first {
    case "soak-compaction":
        try await CompactionSoak.run(option, off: CommandLine.arguments.contains("--off"))
    case "soak":
        try await Soak.run(option)
    case "durable":
        exit(try await DurableTurn.run(option) { CommandLine.arguments.contains($0) })
    case "mcp-memory":
        try await MCPMemory.run(option)
    case "usage-memory":
        try await UsageMemory.run(option, list: CommandLine.arguments.contains("--list"))
    default:
        try await run()
    }
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
