import CodexCore
import CodexRecovery
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

/// The demo's signed-in account: a host-supplied provider with fixed offline credentials.
struct DemoAccount: AuthProvider {
    static let id = "acct-demo"

    func credentials() async throws -> AuthCredentials {
        AuthCredentials(bearerToken: "demo-offline-token", accountID: Self.id, binding: Self.id)
    }

    func recoverAfterUnauthorized(_ rejected: AuthCredentials) async throws -> AuthCredentials? { nil }

    func currentBinding() async -> String? { Self.id }
}

/// One run of the demo, in `directory` (the state database, the recovery store and the host's job file).
struct DemoRun {
    let directory: URL
    let narrator: DemoNarrator
    /// Whether the files stay after the run (`--keep`): the closing lines then say where they are.
    var kept = false
    /// Where the demo's spans and metrics go (`--otlp`), if anywhere.
    var telemetry: AgentTelemetry?

    var databasePath: String { directory.appendingPathComponent("state.sqlite").path }
    var recoveryDirectory: URL { directory.appendingPathComponent("recovery") }

    /// A runtime as a host process builds it: the built-in backend against the loopback service, the
    /// account's credentials on the runtime, two host tools, the SQLite store.
    func makeRuntime(_ server: DemoServer, tools: [AgentTool] = []) throws -> AgentRuntime {
        try Self.makeRuntime(baseURL: server.baseURL, databasePath: databasePath, tools: tools, telemetry: telemetry)
    }

    /// The demo's runtime against the service at `baseURL` (also in the durable step's worker processes,
    /// which know the parent's server only by its URL).
    static func makeRuntime(
        baseURL: URL, databasePath: String, tools: [AgentTool], turnRecovery: AgentTurnRecoveryPolicy = .interrupt,
        telemetry: AgentTelemetry? = nil
    ) throws -> AgentRuntime {
        var backendConfiguration = CodexResponsesBackendConfiguration(model: .gpt6Astra, enableReasoningSummaries: true)
        backendConfiguration.endpoint = try ResponsesEndpoint(baseURL: baseURL, profile: .chatGPT)
        return try AgentRuntime(configuration: .init(
            authProvider: DemoAccount(), backend: CodexResponsesBackend(configuration: backendConfiguration),
            stateStore: try SQLiteRuntimeStateStore(path: databasePath),
            persona: AgentPersonaStack(layers: [.init(name: "support", instructions: "You are a concise shipping support agent.")]),
            tools: tools, maximumParallelToolCalls: 4, turnRecovery: turnRecovery, telemetry: telemetry
        ))
    }

    func run() async throws {
        let started = ContinuousClock.now
        let server = try DemoServer()
        defer { server.shutdown() }
        let concurrency = DemoConcurrency()
        let runtime = try makeRuntime(server, tools: Self.tools(concurrency))
        narrator.note("intro", "CodexKit demo — offline: a loopback server plays the model service; everything else is the real stack "
            + "(HTTP, SSE framing, event decoding, the runtime, SQLite, the recovery store on disk).", ["directory": .string(directory.path)])
        let thread = try await runtime.createThread(title: "Order A-1", configuration: AgentThreadConfiguration(model: .gpt6Astra, reasoningEffort: .low))

        try await streamedTurn(runtime, thread.id)
        try await structuredOutput(runtime, thread.id)
        try await parallelTools(runtime, thread.id, concurrency)
        try await steering(runtime, thread.id, server)
        try await recovery(server)
        try await account(runtime)
        try await durableTurn(server)
        try await mcpTools(server)
        try await restart(thread.id, server)
        await reportTelemetry()
        let elapsed = ContinuousClock.now - started
        let milliseconds = Int(elapsed.inSeconds * 1000)
        narrator.note("done", "Done in \(String(format: "%.2f", elapsed.inSeconds)) s; the service answered \(server.seen.total) requests.", spaced: true,
                      ["elapsed_ms": .number(JSONNumber(milliseconds)), "requests": .number(JSONNumber(server.seen.total))])
        closing()
    }

    /// Sends what is left of the spans and metrics (`--otlp`) and says how many went out.
    private func reportTelemetry() async {
        guard let telemetry, let exporter = telemetry.exporter as? OTLPHTTPExporter else { return }
        await telemetry.shutdown()
        let statistics = exporter.statistics
        let target = exporter.configuration.tracesURL?.absoluteString ?? "the collector"
        narrator.note("telemetry", "OpenTelemetry: \(statistics.exportedSpans) spans and \(statistics.metricExports) metric export(s) sent to \(target); "
            + "\(statistics.failedSpans) failed, \(statistics.droppedSpans) dropped.", spaced: true, [
            "exported_spans": .number(JSONNumber(statistics.exportedSpans)), "failed_spans": .number(JSONNumber(statistics.failedSpans)),
            "dropped_spans": .number(JSONNumber(statistics.droppedSpans)), "metric_exports": .number(JSONNumber(statistics.metricExports)),
        ])
    }

    /// Where the files are (with `--keep`), and the next three commands to try.
    private func closing() {
        if kept {
            narrator.note("kept", "Kept in \(directory.path): state.sqlite (the threads), recovery/ (the recovery store), host-jobs.json (the host's jobs), "
                + "durable/ (the durable step's payments, tool runs and worker log).", [
                "directory": .string(directory.path), "state_store": .string(databasePath), "recovery_store": .string(recoveryDirectory.path),
            ])
        }
        let threads = kept ? "codexctl threads list --db \(databasePath)" : "codexctl demo --keep ./demo-files   (keeps the files to look at)"
        let next = ["codexctl send \"Hello\"   (with OPENAI_API_KEY set, or after signing in with codexctl login or the Codex CLI)", "codexctl chat", threads]
        narrator.list("next", "Next, try:", next)
    }

    // MARK: - Turns

    private func streamedTurn(_ runtime: AgentRuntime, _ threadID: AgentThreadID) async throws {
        narrator.step(1, "A streamed turn: reasoning-summary progress, a host tool, the reply as it streams")
        narrator.say("user", "user: Where is my order A-1?")
        var thinking = ""
        for try await event in try await runtime.stream(Request(text: "Where is my order A-1?"), in: threadID) {
            switch event {
            case .progress(.reasoningSummaryDelta(_, _, let delta)):
                thinking += delta
                narrator.stream("thinking", delta)
            case .toolCallStarted(let call):
                narrator.say("tool_call", "tool call: \(call.toolName) \(call.arguments)", ["tool": .string(call.toolName), "arguments": .string(call.arguments)])
            case .toolCallFinished(let result):
                narrator.say("tool_result", "tool result: \(result.primaryText ?? "")", ["tool": .string(result.toolName)])
            case .assistantMessageDelta(_, _, let delta):
                narrator.stream("assistant", delta)
            case .messageCommitted(let message) where message.role == .assistant:
                if narrator.json { narrator.say("assistant", "assistant: \(message.text)") }
            case .turnCompleted(let summary):
                let tokens = summary.usage?.derivedTotalTokens ?? 0
                narrator.say("turn_completed", "turn completed; \(tokens) tokens over its two model requests",
                             ["tokens": .number(JSONNumber(tokens)), "reasoning_summary": .string(thinking)])
            default: break
            }
        }
    }

    private func structuredOutput(_ runtime: AgentRuntime, _ threadID: AgentThreadID) async throws {
        narrator.step(2, "Structured output, validated locally before it is decoded")
        let draft = try await runtime.send(Request(text: "Draft a reply to the customer."), in: threadID, response: DemoShippingReply.self)
        narrator.say("typed_reply", "send(_:in:response:) → DemoShippingReply(subject: \"\(draft.subject)\", urgency: \"\(draft.urgency)\")",
                     ["subject": .string(draft.subject), "urgency": .string(draft.urgency)])
        var visible = ""
        var partials = 0
        for try await event in try await runtime.stream(Request(text: "Draft it again, with a note."), in: threadID, response: DemoReplyProgress.self) {
            switch event {
            case .assistantMessageDelta(_, _, let delta): visible += delta
            case .structuredOutputPartial(let snapshot):
                partials += 1
                let members = snapshot.value.objectValue.map { $0.keys.isEmpty ? "no members yet" : $0.keys.joined(separator: ", ") } ?? ""
                narrator.say("partial", "partial snapshot \(partials): \(members)", ["members": .number(JSONNumber(snapshot.value.objectValue?.count ?? 0))])
            case .structuredOutputCommitted(let snapshot):
                narrator.say("committed", "committed payload: urgency \(snapshot.value["urgency"]?.stringValue ?? "?"), \(snapshot.value.compactString().utf8.count) bytes",
                             ["payload": snapshot.value])
            default: break
            }
        }
        narrator.say("visible_text", "visible text (framing stripped): \(visible.replacingOccurrences(of: "\n", with: " / "))", ["visible": .string(visible)])
    }

    private func parallelTools(_ runtime: AgentRuntime, _ threadID: AgentThreadID, _ concurrency: DemoConcurrency) async throws {
        narrator.step(3, "Two independent tools in one batch, run in parallel (maximumParallelToolCalls: 4)")
        concurrency.reset()
        let batchStarted = ContinuousClock.now
        var finished: [String] = []
        for try await event in try await runtime.stream(Request(text: "And order B-2?"), in: threadID) {
            switch event {
            case .toolCallStarted(let call):
                narrator.say("tool_call", "started: \(call.toolName) \(call.arguments)", ["tool": .string(call.toolName), "arguments": .string(call.arguments)])
            case .toolCallFinished(let result): finished.append(result.toolName)
            case .messageCommitted(let message) where message.role == .assistant: narrator.say("assistant", "assistant: \(message.text)")
            default: break
            }
        }
        let elapsed = Int((ContinuousClock.now - batchStarted).inSeconds * 1000)
        narrator.say(
            "parallel", "finished: \(finished.sorted().joined(separator: ", ")); peak concurrency observed by the tools: \(concurrency.peak) "
                + "(each works \(DemoConcurrency.workMilliseconds) ms; the turn took \(elapsed) ms)",
            ["peak_concurrency": .number(JSONNumber(concurrency.peak)), "turn_ms": .number(JSONNumber(elapsed))]
        )
    }

    private func steering(_ runtime: AgentRuntime, _ threadID: AgentThreadID, _ server: DemoServer) async throws {
        narrator.step(4, "Steering: input added while the model is still answering")
        var steered = false
        let execution = try await runtime.start(Request(text: "Summarise both orders."), in: threadID)
        for try await event in execution.events {
            switch event {
            case .assistantMessageDelta where !steered:
                steered = true
                try await execution.steer(DemoScript.steer)
                narrator.say("steer", "steer accepted mid-reply: \(DemoScript.steer)")
                server.releaseHeld()
            case .messageCommitted(let message): narrator.say(message.role.rawValue, "\(message.role.rawValue): \(message.text)")
            default: break
            }
        }
        let carried = server.seen.steerSent
        narrator.say("steer_sent", "the turn's next model request carried the steer: \(carried ? "yes" : "no")", ["carried": .bool(carried)])
    }

    // MARK: - Tools

    private struct OrderQuery: Decodable, Sendable {
        let order_id: String
        let postcode: String?
    }

    private static func tools(_ concurrency: DemoConcurrency) -> [AgentTool] {
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
        return [lookup, estimate]
    }
}

/// Counts how many demo tools work at once (each works a fixed time, as a real lookup would wait on I/O).
final class DemoConcurrency: Sendable {
    static let workMilliseconds = 150
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
