@testable import CodexRuntime
import CodexCore
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation

/// Writes Responses SSE streams for the loopback server: `event: <type>\ndata: <json>\n\n` per event,
/// with increasing sequence numbers.
struct ResponsesScript {
    private(set) var events: [String] = []
    private var sequence = 0

    /// The whole stream as one text.
    var text: String { events.joined() }

    /// Appends one event; `fields` are the JSON members after `type` and `sequence_number`.
    mutating func add(_ type: String, _ fields: String = "") {
        let extra = fields.isEmpty ? "" : "," + fields
        events.append("event: \(type)\ndata: {\"type\":\"\(type)\",\"sequence_number\":\(sequence)\(extra)}\n\n")
        sequence += 1
    }

    mutating func created(_ id: String) {
        add("response.created", #""response":{"id":"\#(id)","status":"in_progress","model":"gpt-6-astra"}"#)
    }

    mutating func messageAdded(_ id: String, index: Int, phase: String? = nil) {
        let phaseField = phase.map { #","phase":"\#($0)""# } ?? ""
        add("response.output_item.added", #""output_index":\#(index),"item":{"id":"\#(id)","type":"message","role":"assistant","status":"in_progress","content":[]\#(phaseField)}"#)
    }

    mutating func delta(_ itemID: String, _ text: String, index: Int = 0) {
        add("response.output_text.delta", #""item_id":"\#(itemID)","output_index":\#(index),"content_index":0,"delta":"\#(text)""#)
    }

    mutating func messageDone(_ id: String, _ text: String, index: Int, phase: String? = nil) {
        let phaseField = phase.map { #","phase":"\#($0)""# } ?? ""
        add("response.output_item.done", #""output_index":\#(index),"item":{"id":"\#(id)","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"\#(text)","annotations":[]}]\#(phaseField)}"#)
    }

    mutating func reasoningDone(_ id: String, summary: String, encrypted: String, index: Int) {
        add("response.output_item.done", #""output_index":\#(index),"item":{"id":"\#(id)","type":"reasoning","summary":[{"type":"summary_text","text":"\#(summary)"}],"encrypted_content":"\#(encrypted)"}"#)
    }

    mutating func functionCallDone(_ id: String, callID: String, name: String, arguments: String, index: Int) {
        let escaped = arguments.replacingOccurrences(of: "\"", with: "\\\"")
        add("response.output_item.done", #""output_index":\#(index),"item":{"id":"\#(id)","type":"function_call","status":"completed","call_id":"\#(callID)","name":"\#(name)","arguments":"\#(escaped)"}"#)
    }

    mutating func imageItem(_ kind: String, id: String, status: String, result: String?, index: Int) {
        let resultFields = result.map {
            #","result":"\#($0)","revised_prompt":"A red square","size":"1024x1024","quality":"high","output_format":"png","background":"opaque""#
        } ?? ""
        add(kind, #""output_index":\#(index),"item":{"id":"\#(id)","type":"image_generation_call","status":"\#(status)"\#(resultFields)}"#)
    }

    mutating func completed(_ id: String, input: Int = 10, output: Int = 5) {
        add("response.completed", #""response":{"id":"\#(id)","status":"completed","usage":{"input_tokens":\#(input),"input_tokens_details":{"cached_tokens":2},"output_tokens":\#(output),"output_tokens_details":{"reasoning_tokens":1},"total_tokens":\#(input + output)}}"#)
    }

    /// A whole reply: `response.created`, one completed final-answer message with `text`, `response.completed`.
    static func completedReply(_ id: String, _ text: String, phase: String? = "final_answer") -> ScriptedReply {
        var script = ResponsesScript()
        script.created(id)
        script.messageDone("msg_\(id)", text, index: 0, phase: phase)
        script.completed(id)
        return .sse(script.events)
    }

    /// The usage `completed(_:input:output:)` reports.
    static func usage(input: Int = 10, output: Int = 5) -> AgentUsage {
        AgentUsage(inputTokens: input, cachedInputTokens: 2, outputTokens: output, reasoningOutputTokens: 1, totalTokens: input + output)
    }
}

/// Shared setup of the backend tests.
enum BackendHarness {
    /// An SSE reply that sends `text` and then holds the response open (never completes).
    static func holdingReply(_ text: String) -> ScriptedReply {
        ScriptedReply(headers: [.init(name: "Content-Type", value: "text/event-stream")], parts: [.bytes(Array(text.utf8)), .hold], framing: .chunked)
    }

    static let threadID: AgentThreadID = "thread-1"
    static let turnID: AgentTurnID = "turn-1"

    /// A retry policy with three attempts and no waits.
    static let fastRetry = RetryPolicy(maximumAttempts: 3, initialDelay: .zero, maximumDelay: .zero, jitter: 0)

    /// A backend talking to `server` through the real URLSession transport with an API key.
    static func backend(
        _ server: LoopbackHTTPServer, configuration: CodexResponsesBackendConfiguration = .init(),
        clock: any Clock<Duration> = ContinuousClock(), logSink: any AgentLogSink = NoOpAgentLogSink()
    ) throws -> CodexResponsesBackend {
        var configuration = configuration
        configuration.endpoint = try ResponsesEndpoint(baseURL: server.baseURL.appendingPathComponent("api/codex"), profile: .chatGPT)
        if configuration.retryPolicy == .default { configuration.retryPolicy = fastRetry }
        return CodexResponsesBackend(configuration: configuration, authProvider: APIKeyAuthProvider(apiKey: "sk-test"), clock: clock, logSink: logSink)
    }

    static func turn(
        _ text: String = "Hello", history: [AgentHistoryItem] = [], tools: [ToolDefinition] = [], instructions: String = "Be brief."
    ) -> AgentBackendTurnRequest {
        AgentBackendTurnRequest(
            threadID: threadID, turnID: turnID, request: Request(text: text), history: history, model: .gpt6Astra,
            instructions: instructions, tools: tools
        )
    }

    static func tool(_ name: String, parallel: Bool = false) -> ToolDefinition {
        ToolDefinition(name: name, description: "The \(name) tool.", inputSchema: ["type": "object"], supportsParallelExecution: parallel)
    }

    /// Reads every event; returns them with the error that ended the stream, if any.
    static func drain(_ stream: AgentTurnStream) async -> (events: [AgentBackendEvent], error: (any Error)?) {
        var events: [AgentBackendEvent] = []
        do {
            for try await event in stream.events { events.append(event) }
            return (events, nil)
        } catch {
            return (events, error)
        }
    }

    /// The JSON body of the n-th recorded request.
    static func body(_ server: LoopbackHTTPServer, _ index: Int) throws -> JSONValue {
        let requests = server.requests
        guard requests.indices.contains(index) else { throw LoopbackServerTestError.missingRequest(index) }
        return try JSONValue(parsing: requests[index].body)
    }

    /// A compact, exact description of an event without random message IDs and dates.
    static func describe(_ event: AgentBackendEvent) -> String {
        switch event {
        case .turnStarted(let id): return "turnStarted(\(id))"
        case .progress(let progress): return "progress(\(describe(progress)))"
        case .rateLimitsUpdated(let limits): return "rateLimits(\(limits.count))"
        case .usageUpdated(let usage): return "usage(\(usage.inputTokens ?? -1)/\(usage.outputTokens ?? -1)/\(usage.totalTokens ?? -1))"
        case .assistantMessageDelta(let delta): return "delta(\(delta))"
        case .assistantMessageCompleted(let message): return "message(\(describe(message)))"
        case .toolCallRequested(let call): return "toolCall(\(describe(call)))"
        case .toolCallsRequested(let calls): return "toolCalls(\(calls.map(describe).joined(separator: ", ")))"
        case .reasoningCompleted(let item): return "reasoning(\(item.itemID),\(item.summary),\(item.encryptedContent ?? "nil"))"
        case .turnCompleted(let summary):
            let usage = summary.usage.map { "\($0.inputTokens ?? -1)/\($0.outputTokens ?? -1)/\($0.totalTokens ?? -1)" } ?? "nil"
            return "turnCompleted(\(summary.finalMessage.map(describe) ?? "nil"),\(usage),\(summary.responseID ?? "nil"))"
        default: return "other(\(event))"
        }
    }

    static func describe(_ progress: AgentTurnProgress) -> String {
        switch progress {
        case .messageStarted(let itemID, let phase): return "messageStarted \(itemID) \(phase?.wireName ?? "nil")"
        case .messageCompleted(let itemID, let phase): return "messageCompleted \(itemID) \(phase?.wireName ?? "nil")"
        case .reasoningSummaryDelta(let itemID, let index, let delta): return "summaryDelta \(itemID) \(index) \(delta)"
        case .webSearch(let itemID, let status, let query): return "webSearch \(itemID) \(status) \(query ?? "nil")"
        case .resumed(let pass, let attempt, let reused): return "resumed \(pass) \(attempt) \(reused)"
        case .toolProgress(let id, let progress, let total, let message): return "toolProgress \(id.rawValue) \(progress) \(total.map { "\($0)" } ?? "nil") \(message ?? "nil")"
        }
    }

    static func describe(_ message: AgentMessage) -> String {
        "\(message.role.rawValue),\(message.phase?.wireName ?? "nil"),\(message.text),images:\(message.images.count)"
    }

    static func describe(_ call: ToolInvocation) -> String {
        "\(call.id.rawValue) \(call.toolName) \(call.arguments)"
    }
}

enum LoopbackServerTestError: Error {
    case missingRequest(Int)
}
