import CodexCore
import CodexLoopback
import CodexRuntime
import CodexSchema
import CodexStorageSQLite
import CodexTransport
import Foundation
import Synchronization

/// The demo's typed reply.
struct DemoShippingReply: AgentStructuredOutput {
    let subject: String
    let reply: String
    let urgency: String

    static let responseFormat = AgentStructuredOutputFormat(
        name: "shipping_reply_draft",
        description: "A concise shipping support reply draft.",
        schema: .object(
            properties: ["subject": .string(), "reply": .string(), "urgency": .string(enum: ["low", "medium", "high"])],
            required: ["subject", "reply", "urgency"],
            additionalProperties: false
        )
    )
}

/// The demo's streamed payload: fields may still be missing in partial snapshots, so they decode.
struct DemoReplyProgress: AgentStructuredOutput {
    let subject: String?
    let reply: String?
    let urgency: String?

    static let responseFormat = DemoShippingReply.responseFormat
}

/// `codexctl demo`: the main job, offline. An AgentRuntime with the built-in Responses backend, a host
/// tool and a SQLite state store talks to a loopback server that replays scripted model output through
/// the real URLSession, SSE and Responses stack.
enum DemoCommand: CLICommand {
    static let name = "demo"
    static let help = CommandHelp(
        overview: """
        Run five turns offline against a loopback Responses server that replays scripted model output through \
        the real HTTP/SSE stack: a streamed turn with a host tool call, a typed one-shot reply, streamed prose \
        with a structured payload, two tool calls run in parallel with their measured concurrency, and a steer \
        accepted while the model answers and sent with the turn's next request. State goes to a SQLite database, \
        which is then reopened as after a restart.
        """,
        usage: "codexctl demo [--db <path>]",
        options: [("--db <path>", "Keep the state database here (default: a temporary file, removed afterwards).")]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        if printsHelp(arguments) { return Console.Status.success }
        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments(arguments, flags: [], valueOptions: ["--db"])
        } catch {
            return Console.usageFailure(error.message, help: help)
        }
        guard parsed.positionals.isEmpty else { return Console.usageFailure("Unexpected argument '\(parsed.positionals[0])'", help: help) }
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-demo-\(UUID().uuidString.lowercased())")
        let path = parsed.options["--db"] ?? temporary.appendingPathComponent("state.sqlite").path
        defer { if parsed.options["--db"] == nil { try? FileManager.default.removeItem(at: temporary) } }
        do {
            if parsed.options["--db"] == nil { try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true) }
            try await DemoRun(databasePath: path).run()
            return Console.Status.success
        } catch {
            Console.error("Error: \(error)\n")
            return Console.Status.failure
        }
    }
}

/// One run of the demo.
struct DemoRun {
    let databasePath: String

    func run() async throws {
        let served = Mutex(0)
        let steerSent = Mutex(false)
        let responses = DemoScript.responses
        let server = try LoopbackHTTPServer(keepsRequests: false) { request in
            // The n-th request gets the n-th scripted response; the last one repeats.
            let index = served.withLock { count in
                defer { count += 1 }
                return min(count, responses.count - 1)
            }
            if index == responses.count - 1, String(decoding: request.body, as: UTF8.self).contains(DemoScript.steer) {
                steerSent.withLock { $0 = true }
            }
            if index == responses.count - 2 {
                // Held after its first delta until the demo has steered.
                return ScriptedReply(headers: [.init(name: "Content-Type", value: "text/event-stream")],
                                     parts: [.bytes(DemoScript.held.head), .hold, .bytes(DemoScript.held.tail)], framing: .chunked)
            }
            return .body(responses[index], contentType: "text/event-stream", writeSize: 512)
        }
        defer { server.shutdown() }
        var backendConfiguration = CodexResponsesBackendConfiguration(model: .gpt6Astra)
        backendConfiguration.endpoint = try ResponsesEndpoint(baseURL: server.baseURL, profile: .publicAPI)
        let backend = CodexResponsesBackend(configuration: backendConfiguration, authProvider: APIKeyAuthProvider(apiKey: "sk-demo-offline"))
        let concurrency = DemoConcurrency()
        struct OrderQuery: Decodable, Sendable {
            let order_id: String
            let postcode: String?
        }
        let lookup = AgentTool(
            name: "lookup_order", description: "Look up an order's shipping status.", input: OrderQuery.self,
            schema: .object(properties: ["order_id": .string()]), supportsParallelExecution: true
        ) { input, context in
            try await concurrency.work()
            return context.success(input.order_id == "A-1" ? "Order A-1: shipped with DHL on Friday, arriving Tuesday." : "Order \(input.order_id): packed, leaves today.")
        }
        let estimate = AgentTool(
            name: "estimate_delivery", description: "Estimate the delivery day for a postcode.", input: OrderQuery.self,
            schema: .object(properties: ["order_id": .string(), "postcode": .string()]), supportsParallelExecution: true
        ) { input, context in
            try await concurrency.work()
            return context.success("\(input.order_id) to \(input.postcode ?? "?"): Thursday.")
        }
        let runtime = try AgentRuntime(configuration: .init(
            backend: backend, stateStore: try SQLiteRuntimeStateStore(path: databasePath),
            persona: AgentPersonaStack(layers: [.init(name: "support", instructions: "You are a concise shipping support agent.")]),
            tools: [lookup, estimate], maximumParallelToolCalls: 4
        ))
        try await runtime.recoverAbandonedTurns()  // closes turns a killed earlier run left behind (none on a fresh database)
        Console.line("CodexKit demo — offline: a loopback server replays scripted model output through the real HTTP/SSE stack.")
        Console.line("State database: \(databasePath)\n")
        let thread = try await runtime.createThread(title: "Order A-1", model: .gpt6Astra, reasoningEffort: .low)

        Console.line("1. stream(_:in:) with a host tool")
        Console.line("   user: Where is my order A-1?")
        var speaking = false
        for try await event in try await runtime.stream(Request(text: "Where is my order A-1?"), in: thread.id) {
            switch event {
            case .toolCallStarted(let call): Console.line("   tool call: \(call.toolName) \(call.arguments)")
            case .toolCallFinished(let result): Console.line("   tool result: \(result.primaryText ?? "")")
            case .assistantMessageDelta(_, _, let delta):
                if !speaking { Console.out("   assistant: ") }
                speaking = true
                Console.out(delta)
            case .turnCompleted(let summary):
                Console.line("\n   turn completed; tokens: \(summary.usage?.derivedTotalTokens.map(String.init) ?? "n/a")")
            default: break
            }
        }

        Console.line("\n2. send(_:in:response:) — a typed reply, validated against its schema before decoding")
        let draft = try await runtime.send(Request(text: "Draft a reply to the customer."), in: thread.id, response: DemoShippingReply.self)
        Console.line("   DemoShippingReply(subject: \"\(draft.subject)\", urgency: \"\(draft.urgency)\")")

        Console.line("\n3. stream(_:in:response:) — prose plus a structured payload")
        var visible = ""
        for try await event in try await runtime.stream(Request(text: "Draft it again, with a note."), in: thread.id, response: DemoReplyProgress.self) {
            switch event {
            case .assistantMessageDelta(_, _, let delta): visible += delta
            case .structuredOutputPartial(let snapshot):
                Console.line("   partial snapshot with: \(snapshot.value.objectValue.map { $0.keys.isEmpty ? "no members yet" : $0.keys.joined(separator: ", ") } ?? "")")
            case .structuredOutputCommitted(let snapshot):
                Console.line("   committed payload: urgency \(snapshot.value["urgency"]?.stringValue ?? "?"), \(snapshot.value.compactString().utf8.count) bytes")
            default: break
            }
        }
        Console.line("   visible text (framing stripped): \(visible.replacingOccurrences(of: "\n", with: " / "))")

        Console.line("\n4. two independent tools in one batch, run in parallel (maximumParallelToolCalls: 4)")
        concurrency.reset()
        let batchStarted = ContinuousClock.now
        var finished: [String] = []
        for try await event in try await runtime.stream(Request(text: "And order B-2?"), in: thread.id) {
            switch event {
            case .toolCallStarted(let call): Console.line("   started: \(call.toolName) \(call.arguments)")
            case .toolCallFinished(let result): finished.append(result.toolName)
            case .messageCommitted(let message) where message.role == .assistant: Console.line("   assistant: \(message.text)")
            default: break
            }
        }
        let elapsed = Int((ContinuousClock.now - batchStarted).inSeconds * 1000)
        Console.line("   finished: \(finished.sorted().joined(separator: ", ")); peak concurrency observed by the tools: \(concurrency.peak) "
            + "(each works \(DemoConcurrency.workMilliseconds) ms; the turn took \(elapsed) ms)")

        Console.line("\n5. steer(_:in:expectedTurnID:) — input added while the model is still answering")
        var turnID: AgentTurnID?
        var steered = false
        for try await event in try await runtime.stream(Request(text: "Summarise both orders."), in: thread.id) {
            switch event {
            case .turnStarted(let turn): turnID = turn.id
            case .assistantMessageDelta where !steered:
                steered = true
                try await runtime.steer(DemoScript.steer, in: thread.id, expectedTurnID: turnID)
                Console.line("   steer accepted mid-reply: \(DemoScript.steer)")
                server.releaseHeld()
            case .messageCommitted(let message): Console.line("   \(message.role.rawValue): \(message.text)")
            default: break
            }
        }
        Console.line("   the next model request of the same turn carried the steer: \(steerSent.withLock { $0 } ? "yes" : "no")")

        let reopened = try SQLiteRuntimeStateStore(path: databasePath)
        let items = try await reopened.history(of: thread.id, query: AgentHistoryQuery(limit: 1000)).items
        let messages = items.filter { if case .message = $0 { return true } else { return false } }.count
        let turn = try await reopened.latestTurn(of: thread.id)
        Console.line("\nAfter a restart: thread \"\(try await reopened.thread(thread.id)?.title ?? "?")\" has \(items.count) history items "
            + "(\(messages) messages), latest turn \(turn?.status.rawValue ?? "none"); the model was asked \(DemoScript.responses.count) times.")
    }
}

/// Counts how many demo tools work at once (each works a fixed time, as a real lookup would wait on I/O).
final class DemoConcurrency: Sendable {
    static let workMilliseconds = 200
    private let state = Mutex<(running: Int, peak: Int)>((0, 0))

    var peak: Int { state.withLock { $0.peak } }

    func reset() { state.withLock { $0 = (0, 0) } }

    func work() async throws {
        state.withLock { state in
            state.running += 1
            state.peak = max(state.peak, state.running)
        }
        defer { state.withLock { $0.running -= 1 } }
        try await Task.sleep(for: .milliseconds(Self.workMilliseconds))
    }
}
