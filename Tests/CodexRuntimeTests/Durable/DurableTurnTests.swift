import CodexCore
import CodexRecovery
@testable import CodexRuntime
import CodexSchema
import CodexStorageSQLite
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization
import Testing

/// Durable turns in one process: a turn parks at its approval, is answered by another runtime on the
/// same store, resumes with its finished results reused, and stores the history an uninterrupted turn
/// stores; the journal records every step in order.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct DurableTurnTests {
    /// How often each tool ran, and the charge's effects by idempotency key.
    final class ToolLog: Sendable {
        let runs = Mutex<[String: Int]>([:])
        let charges = Mutex<[String: Int]>([:])
        func ran(_ tool: String) { runs.withLock { $0[tool, default: 0] += 1 } }
        var counts: [String: Int] { runs.withLock { $0 } }
    }

    static func tools(_ log: ToolLog, refundDescription: String = "Refund part of an order.") -> [AgentTool] {
        [
            AgentTool(definition: ToolDefinition(
                name: "lookup_order", description: "Read an order.", inputSchema: ["type": "object"], supportsParallelExecution: true, replaySafety: .idempotent
            )) { _, context in
                log.ran("lookup_order")
                return context.success("order A-1: paid")
            },
            AgentTool(definition: ToolDefinition(name: "charge_card", description: "Charge the card.", inputSchema: ["type": "object"])) { _, context in
                log.ran("charge_card")
                log.charges.withLock { $0[context.idempotencyKey, default: 0] += 1 }
                return context.success("charged 1299")
            },
            AgentTool(definition: ToolDefinition(
                name: "refund_order", description: refundDescription, inputSchema: ["type": "object"], approvalPolicy: .requiresApproval
            )) { _, context in
                log.ran("refund_order")
                return context.success("refunded 300")
            },
        ]
    }

    /// The attempts a policy was asked to authorize.
    final class Attempts: Sendable {
        let list = Mutex<[AgentRecoveryAttempt]>([])
    }

    static func runtime(
        _ store: any RuntimeStateStore, _ server: LoopbackHTTPServer, _ log: ToolLog, presenter: (any AgentApprovalPresenting)? = nil,
        refundDescription: String = "Refund part of an order.", authorized: Attempts = Attempts()
    ) throws -> AgentRuntime {
        var configuration = CodexResponsesBackendConfiguration(model: .gpt6Astra)
        configuration.endpoint = try ResponsesEndpoint(baseURL: server.baseURL.appendingPathComponent("v1"), profile: .publicAPI)
        return try AgentRuntime(configuration: .init(
            backend: CodexResponsesBackend(configuration: configuration, authProvider: APIKeyAuthProvider(apiKey: "sk-test")),
            approvalPresenter: presenter, stateStore: store, tools: tools(log, refundDescription: refundDescription),
            turnRecovery: .resume { attempt in
                authorized.list.withLock { $0.append(attempt) }
                return true
            }
        ))
    }

    /// A history as comparable lines (no dates or generated IDs).
    static func describe(_ items: [AgentHistoryItem]) -> [String] {
        items.map { item in
            switch item {
            case .message(let message): "\(message.role.rawValue): \(message.text)"
            case .toolCall(let call): "call \(call.id.rawValue) \(call.toolName) \(call.arguments)"
            case .toolResult(let result):
                "result \(result.invocationID.rawValue) \(result.status.rawValue) " + result.content.compactMap { if case .text(let text) = $0 { text } else { nil } }.joined()
            case .reasoning(let reasoning): "reasoning \(reasoning.summary.joined())"
            case .systemEvent(let event): "event \(event.type.rawValue)"
            case .contextCompaction: "compaction"
            }
        }
    }

    static func history(_ store: any RuntimeStateStore, _ thread: AgentThreadID) async throws -> [AgentHistoryItem] {
        try await store.history(of: thread, query: AgentHistoryQuery(limit: 200)).items
    }

    @Test func aParkedTurnIsAnsweredByAnotherRuntimeAndResumesWithItsFinishedResultsReused() async throws {
        let directory = try temporaryDirectory("durable")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(handler: DurableTurnScript.reply)
        defer { server.shutdown() }
        let path = directory.appendingPathComponent("state.sqlite").path
        let log = ToolLog()
        let threadID: AgentThreadID
        let turnID: AgentTurnID
        do {
            let store = try SQLiteRuntimeStateStore(path: path)
            let first = try Self.runtime(store, server, log)
            threadID = try await first.createThread(title: "Refund").id
            let parked = await #expect(throws: AgentRuntimeError.self) { _ = try await first.send(Request(text: "Charge then refund A-1"), in: threadID) }
            #expect(parked?.code == .turnWaitingForApproval)
            let turn = try #require(try await store.latestTurn(of: threadID))
            turnID = turn.id
            #expect(turn.status == .waitingForApproval)
            #expect(turn.ownerID == nil, "a parked turn belongs to no runtime")
            let thread = try #require(try await store.thread(threadID))
            #expect(thread.status == .waiting)
            #expect(thread.pending?.kind == .approval)
            #expect(try await store.journal(of: turnID).map(\.kind) == [
                "turn_started", "model_request", "tool_calls", "tool_started", "tool_finished", "tool_started", "tool_finished", "approval_requested",
            ])
            // Nothing else runs on the thread meanwhile.
            let busy = await #expect(throws: AgentRuntimeError.self) { _ = try await first.send(Request(text: "Another thing"), in: threadID) }
            #expect(busy?.code == .threadBusy)
        }
        #expect(log.counts == ["lookup_order": 1, "charge_card": 1])

        // Another runtime (as another process would) answers and resumes.
        let store = try SQLiteRuntimeStateStore(path: path)
        let authorized = Attempts()
        let second = try Self.runtime(store, server, log, authorized: authorized)
        let pending = try await second.approvals(in: threadID)
        #expect(pending.count == 1 && pending[0].isPending)
        let refund = Self.tools(log)[2].definition
        #expect(pending[0].digest == refund.approvalDigest(arguments: pending[0].request.toolInvocation.arguments))
        let answered = try await second.answerApproval(pending[0].id, .approved)
        #expect(answered.decision == .approved)
        let execution = try await second.resumeTurn(turnID, in: threadID)
        var events: [String] = []
        for try await event in execution.events {
            switch event {
            case .progress(.resumed(let pass, let attempt, let reused)): events.append("resumed \(pass) \(attempt) \(reused)")
            case .approvalResolved(let resolution): events.append("approval \(resolution.decision.rawValue)")
            case .toolCallStarted(let call): events.append("started \(call.toolName)")
            case .toolCallFinished(let result): events.append("finished \(result.toolName)")
            case .turnCompleted: events.append("completed")
            default: break
            }
        }
        #expect(events == ["resumed 1 1 2", "started refund_order", "approval approved", "finished refund_order", "completed"])
        #expect(authorized.list.withLock { $0.isEmpty }, "no request was sent again: none needs authorizing")
        #expect(log.counts == ["lookup_order": 1, "charge_card": 1, "refund_order": 1], "no finished result was recomputed")
        #expect(log.charges.withLock { $0.values.sorted() } == [1])
        #expect(server.requests.count == 2)
        #expect(DurableTurnScript.outputOrder(server.requests[1].body) == DurableTurnScript.callIDs)
        #expect(try await store.latestTurn(of: threadID)?.status == .completed)
        #expect(try await store.thread(threadID)?.status == .idle)
        #expect(try await store.journal(of: turnID).map(\.kind).suffix(5) == ["approval_answered", "tool_started", "tool_finished", "model_request", "committed"])
        let items = try await Self.history(store, threadID)
        try AgentHistoryReplay.validate(items)
        #expect(Self.describe(items) == Self.uninterrupted)
        // The usage ledger: the first drive's response, then the resumed drive's, numbered on from it.
        let ledger = try await second.usage(matching: AgentUsageQuery(turnID: turnID))
        #expect(ledger.map(\.sequence) == [0, 1])
        #expect(ledger.map(\.usage.inputTokens) == [20, 40])
    }

    /// The history a turn of the script stores when nothing stops it.
    static let uninterrupted = [
        "event turn_started", "user: Charge then refund A-1", "reasoning Look up, charge, refund.",
        #"call call_lookup lookup_order {"order":"A-1"}"#, #"call call_charge charge_card {"order":"A-1","cents":1299}"#,
        #"call call_refund refund_order {"order":"A-1","cents":300}"#,
        "result call_lookup success order A-1: paid", "result call_charge success charged 1299", "result call_refund success refunded 300",
        "assistant: \(DurableTurnScript.answer)", "event turn_completed",
    ]

    @Test func anUninterruptedDurableTurnStoresTheSameHistoryAndJournalsEveryStep() async throws {
        let server = try LoopbackHTTPServer(handler: DurableTurnScript.reply)
        defer { server.shutdown() }
        let store = InMemoryRuntimeStateStore()
        let inbox = ApprovalInbox()
        let approvals = Task { for await request in inbox.requests { inbox.resolve(request.id, .approved) } }
        defer { approvals.cancel() }
        let log = ToolLog()
        let runtime = try Self.runtime(store, server, log, presenter: inbox)
        let thread = try await runtime.createThread()
        #expect(try await runtime.send(Request(text: "Charge then refund A-1"), in: thread.id) == DurableTurnScript.answer)
        #expect(Self.describe(try await Self.history(store, thread.id)) == Self.uninterrupted)
        let turn = try #require(try await store.latestTurn(of: thread.id))
        await runtime.flushPendingWrites()
        let journal = try await store.journal(of: turn.id)
        #expect(journal.map(\.kind) == [
            "turn_started", "model_request", "tool_calls", "tool_started", "tool_finished", "tool_started", "tool_finished",
            "approval_requested", "approval_answered", "tool_started", "tool_finished", "model_request", "committed",
        ])
        guard case .toolStarted(_, let key) = journal[5] else { Issue.record("entry 5 is \(journal[5].kind)"); return }
        #expect(key == ToolExecutionContext.idempotencyKey(thread: thread.id, turn: turn.id, call: "call_charge"))
        #expect(log.charges.withLock { Array($0.keys) } == [key], "the executor saw the key the journal recorded")
        #expect(try await store.approvals(in: thread.id).map(\.decision) == [.approved])
    }

    @Test func anAnswerForAChangedToolDefinitionIsRefusedAsStale() async throws {
        let server = try LoopbackHTTPServer(handler: DurableTurnScript.reply)
        defer { server.shutdown() }
        let store = InMemoryRuntimeStateStore()
        let log = ToolLog()
        let thread: AgentThreadID
        do {
            let first = try Self.runtime(store, server, log)
            thread = try await first.createThread().id
            _ = try? await first.send(Request(text: "Charge then refund A-1"), in: thread)
        }
        let changed = try Self.runtime(store, server, log, refundDescription: "Refund all of an order.")
        let approval = try #require(try await changed.approvals(in: thread).first)
        let stale = await #expect(throws: AgentRuntimeError.self) { try await changed.answerApproval(approval.id, .approved) }
        #expect(stale?.code == .approvalStale)
        #expect(try await store.approval(approval.id)?.isPending == true, "nothing was answered")
        let unknown = await #expect(throws: AgentRuntimeError.self) { try await changed.answerApproval(AgentApprovalID(), .approved) }
        #expect(unknown?.code == .approvalNotFound)
    }

    @Test func turnsThatCannotBeResumedSayWhy() async throws {
        let server = try LoopbackHTTPServer(handler: { _ in .sse([DurableTurnScript.finalAnswer()]) })
        defer { server.shutdown() }
        let store = InMemoryRuntimeStateStore()
        let log = ToolLog()
        let runtime = try Self.runtime(store, server, log)
        let thread = try await runtime.createThread()
        _ = try await runtime.send(Request(text: "Hello"), in: thread.id)
        let turn = try #require(try await store.latestTurn(of: thread.id))
        let ended = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.resumeTurn(turn.id, in: thread.id) }
        #expect(ended?.code == .turnNotResumable)
        #expect(ended?.message == "the turn ended (completed)")
        let other = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.resumeTurn(AgentTurnID(), in: thread.id) }
        #expect(other?.code == .turnNotResumable)

        var configuration = runtime.configuration
        configuration.turnRecovery = .interrupt
        let plain = try AgentRuntime(configuration: configuration)
        let off = await #expect(throws: AgentRuntimeError.self) { _ = try await plain.resumeTurn(turn.id, in: thread.id) }
        #expect(off?.message == "the runtime's turn recovery policy does not resume turns")

        // A store that keeps no journals cannot serve the resume policy.
        struct PlainStore: ForwardingStateStore {
            let base: any RuntimeStateStore = InMemoryRuntimeStateStore()
        }
        configuration = runtime.configuration
        configuration.stateStore = PlainStore()
        let refused = #expect(throws: AgentRuntimeError.self) { _ = try AgentRuntime(configuration: configuration) }
        #expect(refused?.code == .invalidConfiguration)
    }

    @Test func theIdempotencyKeyIsStableForACallAndDiffersBetweenCalls() {
        let thread = AgentThreadID(rawValue: "thread-1")
        let turn = AgentTurnID(rawValue: "turn-1")
        let key = ToolExecutionContext.idempotencyKey(thread: thread, turn: turn, call: "call_1")
        #expect(key == ToolExecutionContext.idempotencyKey(thread: thread, turn: turn, call: "call_1"))
        #expect(key.hasPrefix("ck_") && key.count == 35)
        #expect(key != ToolExecutionContext.idempotencyKey(thread: thread, turn: turn, call: "call_2"))
        #expect(key != ToolExecutionContext.idempotencyKey(thread: thread, turn: AgentTurnID(rawValue: "turn-2"), call: "call_1"))
        let context = ToolExecutionContext(invocation: ToolInvocation(id: "call_1", toolName: "x", arguments: "{}"), threadID: thread, turnID: turn, arguments: [:])
        #expect(context.idempotencyKey == key)
    }
}
