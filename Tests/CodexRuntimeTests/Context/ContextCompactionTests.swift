@testable import CodexRuntime
import CodexCore
import CodexSchema
import CodexStorageSQLite
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization
import Testing

/// A scripted model service for compaction: `/responses/compact` answers from `compact`, every other
/// request gets the next of `turns` (the last repeats), and the service records what it was sent.
final class CompactionService: Sendable {
    let server: LoopbackHTTPServer

    init(turns: [ScriptedReply], compacts: [ScriptedReply] = [CompactionService.compacted("enc-1")]) throws {
        let box = Replies(turns: turns, compacts: compacts)
        server = try LoopbackHTTPServer { request in
            box.next(compaction: request.path.hasSuffix("/responses/compact"))
        }
    }

    deinit { server.shutdown() }

    /// A compaction reply: one `compaction` item and a short user message.
    static func compacted(_ encrypted: String) -> ScriptedReply {
        .json(#"{"output":[{"type":"compaction","encrypted_content":"\#(encrypted)"},{"type":"message","role":"user","content":[{"type":"input_text","text":"Earlier: order A-1 shipped."}]}]}"#)
    }

    /// The bodies of the turn requests (`/responses`), in order.
    func turnBodies() throws -> [JSONValue] {
        try server.requests.filter { $0.path.hasSuffix("/responses") }.map { try JSONValue(parsing: $0.body) }
    }

    /// The bodies of the compaction requests, in order.
    func compactBodies() throws -> [JSONValue] {
        try server.requests.filter { $0.path.hasSuffix("/responses/compact") }.map { try JSONValue(parsing: $0.body) }
    }

    /// The scripted replies, each list used in order with its last one repeating.
    private final class Replies: Sendable {
        private let state: Mutex<(turns: [ScriptedReply], compacts: [ScriptedReply])>

        init(turns: [ScriptedReply], compacts: [ScriptedReply]) { state = Mutex((turns, compacts)) }

        func next(compaction: Bool) -> ScriptedReply {
            state.withLock { state in
                if compaction { return state.compacts.count > 1 ? state.compacts.removeFirst() : state.compacts[0] }
                return state.turns.count > 1 ? state.turns.removeFirst() : state.turns[0]
            }
        }
    }
}

@Suite(.timeLimit(.minutes(5 * Sanitizer.slowdown))) struct ContextCompactionTests {
    private func runtime(
        _ service: CompactionService, store: any RuntimeStateStore = InMemoryRuntimeStateStore(),
        compaction: AgentContextCompactionConfiguration = .init(isEnabled: true, mode: .manual)
    ) throws -> AgentRuntime {
        try AgentRuntime(configuration: .init(
            backend: try BackendHarness.backend(service.server, configuration: .init(model: .gpt6Astra)), stateStore: store,
            persona: AgentPersonaStack(layers: [.init(name: "support", instructions: "Be brief.")]), contextCompaction: compaction
        ))
    }

    private func send(_ runtime: AgentRuntime, _ text: String, in thread: AgentThreadID) async throws {
        for try await _ in try await runtime.stream(Request(text: text), in: thread) {}
    }

    private func inputTexts(_ body: JSONValue) -> [String] {
        (body["input"]?.arrayValue ?? []).map { item in
            if item["type"]?.stringValue == "compaction" { return "compaction:\(item["encrypted_content"]?.stringValue ?? "")" }
            let role = item["role"]?.stringValue ?? item["type"]?.stringValue ?? "?"
            let text = item["content"]?.arrayValue?.first?["text"]?.stringValue ?? ""
            return "\(role): \(text)"
        }
    }

    @Test func theUsageEstimateCountsWhatTheNextRequestSends() async throws {
        let service = try CompactionService(turns: [ResponsesScript.completedReply("r1", "Shipped on Friday.")])
        let runtime = try runtime(service, compaction: .init(isEnabled: true))
        let thread = try await runtime.createThread(title: "Orders")
        let empty = try await runtime.fetchThreadContextUsage(id: thread.id)
        #expect(empty.items == 0 && empty.bytes == "Be brief.".utf8.count && empty.estimatedTokens == 3)
        #expect(empty.estimator == "utf8_bytes_div_4")
        #expect(empty.model == .gpt6Astra && empty.contextWindow == 272_000 && empty.compactionThreshold == 16_000 && empty.compactions == 0)

        try await send(runtime, "Where is order A-1?", in: thread.id)
        let usage = try await runtime.fetchThreadContextUsage(id: thread.id)
        // The user message and the reply are sent; the turn events are not.
        let bytes = "Be brief.".utf8.count + "Where is order A-1?".utf8.count + "Shipped on Friday.".utf8.count
        #expect(usage.items == 2 && usage.bytes == bytes && usage.estimatedTokens == (bytes + 3) / 4)
        #expect(usage.fractionOfContextWindow == Double((bytes + 3) / 4) / 272_000)
        #expect(service.server.requests.count == 1, "looking sends nothing")

        let disabled = try self.runtime(service, compaction: .init())
        let other = try await disabled.createThread(title: "x")
        #expect(try await disabled.fetchThreadContextUsage(id: other.id).compactionThreshold == nil)
        await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.fetchThreadContextUsage(id: "nope") }
    }

    @Test func aRemoteCompactionReplacesTheHistoryInLaterRequestsAndSurvivesAReopen() async throws {
        let directory = try temporaryDirectory("compaction")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state.sqlite").path
        let service = try CompactionService(turns: [
            ResponsesScript.completedReply("r1", "It shipped."), ResponsesScript.completedReply("r2", "Tuesday."),
            ResponsesScript.completedReply("r3", "You are welcome."),
        ])
        let first = try runtime(service, store: try SQLiteRuntimeStateStore(path: path))
        let thread = try await first.createThread(title: "Orders")
        try await send(first, "Where is order A-1?", in: thread.id)
        try await send(first, "When does it arrive?", in: thread.id)
        let visibleBefore = describe(try await first.history(of: thread.id, query: AgentHistoryQuery(limit: 100)).items)

        let record = try await first.compactThreadContext(id: thread.id)
        #expect(record.strategy == .remote && record.replacedItemCount == 8 && record.coversItemsBefore == 8)
        #expect(record.providerItems.count == 2)
        let compact = try #require(try service.compactBodies().first)
        #expect(compact["model"] == "gpt-6-astra" && compact["instructions"] == "Be brief.")
        #expect(inputTexts(compact) == ["user: Where is order A-1?", "assistant: It shipped.", "user: When does it arrive?", "assistant: Tuesday."])

        // The visible history is untouched: the record is appended, nothing else changes.
        let after = describe(try await first.history(of: thread.id, query: AgentHistoryQuery(limit: 100)).items)
        #expect(after == visibleBefore + ["compaction remote 8"])

        // A reopened runtime replays the replacement, not the compacted messages.
        let reopened = try runtime(service, store: try SQLiteRuntimeStateStore(path: path))
        try await send(reopened, "Thanks!", in: thread.id)
        let last = try #require(try service.turnBodies().last)
        #expect(inputTexts(last) == ["compaction:enc-1", "user: Earlier: order A-1 shipped.", "user: Thanks!"])
        let usage = try await reopened.fetchThreadContextUsage(id: thread.id)
        #expect(usage.compactions == 1 && usage.items == 4)
        let exported = try await reopened.history(of: thread.id, query: AgentHistoryQuery(limit: 100)).items
        #expect(exported.count == 13, "every message stays readable and exportable")
    }

    @Test func aFailedRemoteCompactionFallsBackToALocalSummaryOrFailsLeavingTheThreadAsItWas() async throws {
        let failing = ScriptedReply.json(#"{"error":{"message":"no","type":"invalid_request_error"}}"#, status: 404)
        let service = try CompactionService(turns: [
            ResponsesScript.completedReply("r1", "It shipped."), ResponsesScript.completedReply("s1", "The user asked about order A-1; it shipped."),
            ResponsesScript.completedReply("r2", "Noted."),
        ], compacts: [failing])
        let runtime = try runtime(service)
        let thread = try await runtime.createThread(title: "Orders")
        try await send(runtime, "Where is order A-1?", in: thread.id)
        let record = try await runtime.compactThreadContext(id: thread.id)
        #expect(record.strategy == .local && record.summary == "The user asked about order A-1; it shipped.")
        // The summary request: the history, then the fixed instruction; no tools.
        let summaryRequest = try service.turnBodies()[1]
        #expect(inputTexts(summaryRequest) == ["user: Where is order A-1?", "assistant: It shipped.", "user: \(AgentContextCompaction.summaryInstruction)"])
        try await send(runtime, "Next?", in: thread.id)
        #expect(inputTexts(try service.turnBodies()[2]) == ["developer: \(AgentContextCompaction.summaryMessage("The user asked about order A-1; it shipped."))", "user: Next?"])

        // Remote only: the failure is thrown and nothing is stored.
        let strict = try AgentRuntime(configuration: .init(
            backend: try BackendHarness.backend(service.server), stateStore: InMemoryRuntimeStateStore(),
            contextCompaction: .init(isEnabled: true, mode: .manual, strategy: .remoteOnly)
        ))
        let other = try await strict.createThread(title: "x")
        try await send(strict, "Hello", in: other.id)
        let before = try await strict.history(of: other.id, query: AgentHistoryQuery(limit: 100)).items
        let error = await #expect(throws: AgentRuntimeError.self) { try await strict.compactThreadContext(id: other.id) }
        #expect(error?.http?.statusCode == 404)
        #expect(try await strict.history(of: other.id, query: AgentHistoryQuery(limit: 100)).items == before)
        let nothing = await #expect(throws: AgentRuntimeError.self) { try await strict.compactThreadContext(id: (try await strict.createThread(title: "y")).id) }
        #expect(nothing?.code == .compactionUnavailable)
    }

    @Test func contextLengthExceededBeforeOutputCompactsOnceAndRetriesOnce() async throws {
        let tooLong = ScriptedReply.json(#"{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}"#, status: 400)
        let service = try CompactionService(turns: [ResponsesScript.completedReply("r1", "It shipped."), tooLong, ResponsesScript.completedReply("r2", "Tuesday.")])
        let runtime = try runtime(service, compaction: .init(isEnabled: true, trigger: .estimatedTokens(1_000_000)))
        let thread = try await runtime.createThread(title: "Orders")
        try await send(runtime, "Where is order A-1?", in: thread.id)
        try await send(runtime, "When does it arrive?", in: thread.id)
        #expect(service.server.requests.map(\.path) == ["/api/codex/responses", "/api/codex/responses", "/api/codex/responses/compact", "/api/codex/responses"])
        #expect(inputTexts(try service.turnBodies()[2]) == ["compaction:enc-1", "user: Earlier: order A-1 shipped.", "user: When does it arrive?"])
        #expect(try await runtime.configuration.stateStore.latestTurn(of: thread.id)?.status == .completed)
        // The next turn replays the replacement, then this turn's input and reply.
        let history = describe(try await runtime.history(of: thread.id, query: AgentHistoryQuery(limit: 100)).items)
        #expect(Array(history.suffix(5)) == ["event turn_started", "user: When does it arrive?", "compaction remote 4", "assistant: Tuesday.", "event turn_completed"])

        // Too long again after the compaction: no second compaction, no third request; the turn fails.
        let stubborn = try CompactionService(turns: [tooLong])
        let failing = try self.runtime(stubborn, compaction: .init(isEnabled: true, trigger: .estimatedTokens(1_000_000)))
        let other = try await failing.createThread(title: "x")
        let history2 = AgentHistoryItem.message(AgentMessage(threadID: other.id, role: .user, text: "Old question"))
        try await failing.configuration.stateStore.appendHistory([history2, .message(AgentMessage(threadID: other.id, role: .assistant, text: "Old answer"))], to: other.id)
        let error = await #expect(throws: AgentRuntimeError.self) { try await send(failing, "Now?", in: other.id) }
        #expect(error?.code == .contextLengthExceeded)
        #expect(stubborn.server.requests.map(\.path) == ["/api/codex/responses", "/api/codex/responses/compact", "/api/codex/responses"])
    }

    @Test func aTooLongFailureEventBeforeAnyOutputAlsoCompactsOnceAndRetries() async throws {
        // The usual form: the request is accepted, then `response.failed` says it is too long.
        var refused = ResponsesScript()
        refused.created("r2")
        refused.add("response.failed", #""response":{"id":"r2","status":"failed","error":{"code":"context_length_exceeded","message":"too long"}}"#)
        let service = try CompactionService(turns: [ResponsesScript.completedReply("r1", "It shipped."), .sse(refused.events), ResponsesScript.completedReply("r3", "Tuesday.")])
        let runtime = try runtime(service, compaction: .init(isEnabled: true, trigger: .estimatedTokens(1_000_000)))
        let thread = try await runtime.createThread(title: "Orders")
        try await send(runtime, "Where is order A-1?", in: thread.id)
        var events: [String] = []
        for try await event in try await runtime.stream(Request(text: "When does it arrive?"), in: thread.id) { events.append(name(event)) }
        #expect(service.server.requests.map(\.path) == ["/api/codex/responses", "/api/codex/responses", "/api/codex/responses/compact", "/api/codex/responses"])
        #expect(inputTexts(try service.turnBodies()[2]) == ["compaction:enc-1", "user: Earlier: order A-1 shipped.", "user: When does it arrive?"])
        #expect(events.filter { $0.hasPrefix("delta") || $0.hasPrefix("turnFailed") }.isEmpty, "the refused attempt showed nothing: \(events)")
        #expect(try await runtime.configuration.stateStore.latestTurn(of: thread.id)?.status == .completed)
    }

    @Test func aCompactionHoldsTheThreadWithoutPosingAsATurn() async throws {
        let held = ScriptedReply(
            headers: [.init(name: "Content-Type", value: "application/json")],
            parts: [.hold, .bytes(Array(#"{"output":[{"type":"compaction","encrypted_content":"enc-1"}]}"#.utf8))], framing: .chunked
        )
        let service = try CompactionService(turns: [ResponsesScript.completedReply("r1", "It shipped.")], compacts: [held])
        let runtime = try runtime(service)
        let thread = try await runtime.createThread(title: "Orders")
        try await send(runtime, "Where is order A-1?", in: thread.id)
        let compaction = Task { try await runtime.compactThreadContext(id: thread.id) }
        #expect(await service.server.waitForRequests(count: 2, timeout: .hangGuard))
        // While it runs: no turn is active, steering and interruption are refused at once, a new turn is busy.
        #expect(runtime.activeTurnID(in: thread.id) == nil)
        let steer = await #expect(throws: AgentRuntimeError.self) { try await runtime.steer("more", in: thread.id) }
        #expect(steer?.code == .turnNotActive)
        let interrupt = await #expect(throws: AgentRuntimeError.self) { try await runtime.interrupt(in: thread.id) }
        #expect(interrupt?.code == .turnNotActive)
        let busy = await #expect(throws: AgentRuntimeError.self) { try await send(runtime, "Hello?", in: thread.id) }
        #expect(busy?.code == .threadBusy)
        let twice = await #expect(throws: AgentRuntimeError.self) { try await runtime.compactThreadContext(id: thread.id) }
        #expect(twice?.code == .threadBusy)
        service.server.releaseHeld()
        #expect(try await compaction.value.strategy == .remote)

        // And the other way round: a running turn makes a compaction busy.
        let turnHeld = try CompactionService(turns: [BackendHarness.holdingReply("")])
        let other = try self.runtime(turnHeld)
        let longThread = try await other.createThread(title: "x")
        try await other.configuration.stateStore.appendHistory(
            [.message(AgentMessage(threadID: longThread.id, role: .user, text: "Old")), .message(AgentMessage(threadID: longThread.id, role: .assistant, text: "Reply"))],
            to: longThread.id
        )
        let execution = try await other.start(Request(text: "Now"), in: longThread.id)
        #expect(await turnHeld.server.waitForRequests(count: 1, timeout: .hangGuard))
        let refused = await #expect(throws: AgentRuntimeError.self) { try await other.compactThreadContext(id: longThread.id) }
        #expect(refused?.code == .threadBusy)
        execution.cancel()
        turnHeld.server.releaseHeld()
        #expect(try turnHeld.compactBodies().isEmpty)
    }

    @Test func afterOutputOrForEphemeralTurnsNothingIsCompacted() async throws {
        var script = ResponsesScript()
        script.created("r1")
        script.delta("msg_1", "Partial")
        script.add("response.failed", #""response":{"id":"r1","status":"failed","error":{"code":"context_length_exceeded","message":"too long"}}"#)
        let service = try CompactionService(turns: [.sse(script.events), ResponsesScript.completedReply("r2", "Ephemeral reply.")])
        let runtime = try runtime(service, compaction: .init(isEnabled: true, trigger: .estimatedTokens(1)))
        let thread = try await runtime.createThread(title: "Orders")
        let error = await #expect(throws: AgentRuntimeError.self) { try await send(runtime, "Hi", in: thread.id) }
        #expect(error?.code == .contextLengthExceeded)
        // The threshold (1 token) was passed before the first turn, but there was nothing to compact yet.
        #expect(try service.compactBodies().isEmpty)
        for try await _ in try await runtime.stream(Request(text: "Once", executionMode: .ephemeral), in: thread.id) {}
        #expect(try service.compactBodies().isEmpty, "an ephemeral turn never compacts")
    }

    /// The soak runs in a child process at the lowest priority (`RuntimeFixture soak-compaction`), so its
    /// 500 turns never starve the suites running beside it.
    private func soak(turns: Int, threshold: Int, off: Bool = false) async throws -> JSONValue {
        let directory = try temporaryDirectory("compaction-soak")
        defer { try? FileManager.default.removeItem(at: directory) }
        var arguments = ["-n", "19", ChildProcess.product("RuntimeFixture").path, "soak-compaction", "--db", directory.appendingPathComponent("state.sqlite").path,
                         "--turns", String(turns), "--threshold", String(threshold)]
        if off { arguments.append("--off") }
        let outcome = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/nice"), arguments)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        return try JSONValue(parsing: Array(outcome.stdout.utf8))
    }

    @Test func aReplacementNearTheThresholdIsNotCompactedAgainUntilAQuarterOfItIsNew() async throws {
        let long = String(repeating: "x", count: 420)
        let replacement = ScriptedReply.json(#"{"output":[{"type":"compaction","encrypted_content":"enc-big"},{"type":"message","role":"user","content":[{"type":"input_text","text":"\#(long)"}]}]}"#)
        let service = try CompactionService(turns: [ResponsesScript.completedReply("r", "Fine.")], compacts: [replacement])
        let logs = InMemoryAgentLogSink()
        let runtime = try AgentRuntime(configuration: .init(
            backend: try BackendHarness.backend(service.server, configuration: .init(model: .gpt6Astra)), stateStore: InMemoryRuntimeStateStore(),
            logSink: logs, persona: AgentPersonaStack(layers: [.init(name: "support", instructions: "Be brief.")]),
            contextCompaction: .init(isEnabled: true, trigger: .estimatedTokens(100))
        ))
        let thread = try await runtime.createThread(title: "Orders")
        try await send(runtime, String(repeating: "a", count: 500), in: thread.id)
        try await send(runtime, "Hi", in: thread.id)
        #expect(try service.compactBodies().count == 1, "the first long turn is compacted before the second")
        // The replacement alone is past the threshold; two short turns add little: no compaction.
        try await send(runtime, "Ok", in: thread.id)
        try await send(runtime, "Yes", in: thread.id)
        #expect(try service.compactBodies().count == 1)
        #expect(logs.events(named: "runtime.compaction.skipped").map { $0.metadata["reason"] } == ["little_new_history", "little_new_history"])
        // A quarter of the threshold (25 estimated tokens) of new history: compacted again.
        try await send(runtime, String(repeating: "b", count: 120), in: thread.id)
        #expect(try service.compactBodies().count == 2)
        let usage = try await runtime.fetchThreadContextUsage(id: thread.id)
        #expect(usage.compactions == 2)
    }

    @Test func automaticCompactionKeepsEveryRequestNearTheThresholdOverFiveHundredTurns() async throws {
        let threshold = 1_000
        let on = try await soak(turns: 500, threshold: threshold)
        let content = (on["content_bytes"]?.arrayValue ?? []).compactMap { $0.numberValue?.intValue }
        let oneTurn = try #require(on["turn_bytes"]?.numberValue?.intValue)
        #expect(content.count == 500)
        // Every request carries at most the threshold's worth plus one turn.
        let bound = threshold * 4 + oneTurn
        #expect(content.allSatisfy { $0 <= bound }, "largest \(content.max() ?? 0) > \(bound)")
        let compactions = try #require(on["compactions"]?.numberValue?.intValue)
        #expect(compactions >= 50 && compactions <= 125, "\(compactions) compactions")
        #expect(on["recorded_compactions"]?.numberValue?.intValue == compactions)

        // Off: the request grows by the same step, more than one turn, every time.
        let off = try await soak(turns: 60, threshold: threshold, off: true)
        let grown = (off["content_bytes"]?.arrayValue ?? []).compactMap { $0.numberValue?.intValue }
        let steps = zip(grown.dropFirst(), grown).map { $0 - $1 }
        #expect(grown.count == 60)
        #expect(Set(steps) == [oneTurn], "linear growth: every step one turn (\(Set(steps)))")
        #expect(off["compactions"]?.numberValue?.intValue == 0)
    }
}
