import CodexCore
import CodexLoopback
import CodexRuntime
import CodexSchema
import CodexStorageSQLite
import CodexTransport
import Foundation

/// `RuntimeFixture soak-compaction --db PATH --turns N --threshold T [--off]`: N turns on one thread
/// through the built-in backend, a loopback model service and a SQLite store, with automatic compaction
/// at T estimated tokens (or none with `--off`). Prints one JSON object: the content bytes each turn
/// request carried (text and encrypted content, as the estimator counts them), the compactions the
/// service was asked for, and the bytes of one turn's question and reply.
enum CompactionSoak {
    static let question = String(repeating: "How is the shipment going? ", count: 8)
    static let reply = String(repeating: "All good on that front. ", count: 8)

    static func run(_ option: (String) -> String?, off: Bool) async throws {
        guard let path = option("--db"), let turns = option("--turns").flatMap(Int.init), let threshold = option("--threshold").flatMap(Int.init) else {
            throw AgentRuntimeError(code: .invalidRequest, message: "usage: soak-compaction --db PATH --turns N --threshold T [--off]")
        }
        let events = [
            #"{"type":"response.created","sequence_number":0,"response":{"id":"r","status":"in_progress"}}"#,
            #"{"type":"response.output_item.done","sequence_number":1,"output_index":0,"item":{"type":"message","id":"m","role":"assistant","status":"completed","phase":"final_answer","content":[{"type":"output_text","text":"\#(reply)"}]}}"#,
            #"{"type":"response.completed","sequence_number":2,"response":{"id":"r","status":"completed"}}"#,
        ].map { "data: \($0)\n\n" }
        let compacted = #"{"output":[{"type":"compaction","encrypted_content":"enc"},{"type":"message","role":"user","content":[{"type":"input_text","text":"Earlier: the shipment is fine."}]}]}"#
        let server = try LoopbackHTTPServer { request in
            request.path.hasSuffix("/responses/compact") ? .json(compacted) : .sse(events)
        }
        defer { server.shutdown() }
        var configuration = CodexResponsesBackendConfiguration(model: .gpt6Astra)
        configuration.endpoint = try ResponsesEndpoint(baseURL: server.baseURL.appendingPathComponent("api/codex"), profile: .chatGPT)
        let runtime = try AgentRuntime(configuration: .init(
            backend: CodexResponsesBackend(configuration: configuration, authProvider: APIKeyAuthProvider(apiKey: "sk-soak")),
            stateStore: try SQLiteRuntimeStateStore(path: path),
            persona: AgentPersonaStack(layers: [.init(name: "support", instructions: "Be brief.")]),
            contextCompaction: off ? .init() : .init(isEnabled: true, trigger: .estimatedTokens(threshold))
        ))
        let thread = try await runtime.createThread(title: "Long")
        for _ in 0..<turns {
            for try await _ in try await runtime.stream(Request(text: question), in: thread.id) {}
        }
        let bodies = try server.requests.filter { $0.path.hasSuffix("/responses") }.map { try JSONValue(parsing: $0.body) }
        let content: [JSONValue] = bodies.map { body in
            let bytes = (body["input"]?.arrayValue ?? []).reduce(body["instructions"]?.stringValue?.utf8.count ?? 0) { total, item in
                let texts = (item["content"]?.arrayValue ?? []).compactMap { $0["text"]?.stringValue }
                return total + texts.reduce(0) { $0 + $1.utf8.count } + (item["encrypted_content"]?.stringValue?.utf8.count ?? 0)
            }
            return .number(JSONNumber(bytes))
        }
        let compactions = server.requests.filter { $0.path.hasSuffix("/responses/compact") }.count
        let usage = try await runtime.fetchThreadContextUsage(id: thread.id)
        let report: JSONValue = [
            "content_bytes": .array(content), "compactions": .number(JSONNumber(compactions)),
            "recorded_compactions": .number(JSONNumber(usage.compactions)),
            "turn_bytes": .number(JSONNumber(question.utf8.count + reply.utf8.count)),
        ]
        FileHandle.standardOutput.write(Data((report.compactString() + "\n").utf8))
    }
}
