public import CodexCore
import Foundation

/// The behaviour every ``CodexCore/RuntimeStateStore`` must have, as a reusable check: the SQLite store
/// runs it against a file and `:memory:`, and the in-memory store of the runtime runs it too. Each check
/// returns the list of broken expectations (empty when the store conforms).
public enum RuntimeStateStoreConformance {
    /// Names and runs every check; returns `"check: problem"` lines.
    public static func run(_ makeStore: () async throws -> any RuntimeStateStore) async throws -> [String] {
        var problems: [String] = []
        for (name, check) in checks + journalChecks + usageChecks {
            for problem in try await check(try await makeStore()) { problems.append("\(name): \(problem)") }
        }
        return problems
    }

    /// A realistic history: a user message, a reasoning item, a tool call and its result, an assistant
    /// answer with a phase, and a turn-completed event.
    public static func sampleHistory(thread: AgentThreadID, turn: AgentTurnID, index: Int = 0) -> [AgentHistoryItem] {
        let created = Date(timeIntervalSince1970: 1_800_000_000 + Double(index))
        let invocation = ToolInvocation(id: ToolInvocationID(rawValue: "call_\(index)"), toolName: "lookup_order", arguments: #"{"order":\#(index)}"#)
        return [
            .message(AgentMessage(threadID: thread, role: .user, text: "Where is order \(index)?", createdAt: created)),
            .reasoning(AgentReasoningItem(itemID: "rs_\(index)", summary: ["Look it up."], encryptedContent: "gAAAA\(index)")),
            .toolCall(invocation),
            .toolResult(.success(invocation, text: "Order \(index) ships Tuesday.")),
            .message(AgentMessage(threadID: thread, role: .assistant, text: "It ships Tuesday.", phase: .finalAnswer, createdAt: created)),
            .systemEvent(AgentSystemEvent(type: .turnCompleted, turnID: turn, occurredAt: created)),
        ]
    }

    static let checks: [(String, @Sendable (any RuntimeStateStore) async throws -> [String])] = [
        ("threadsRoundTripAndSortByUpdate", threadsRoundTripAndSortByUpdate),
        ("historyKeepsOrderAndPagesBothWays", historyKeepsOrderAndPagesBothWays),
        ("appendingToAMissingThreadFailsAndWritesNothing", appendingToAMissingThreadFailsAndWritesNothing),
        ("everyWriteNamingAMissingThreadIsThreadNotFound", everyWriteNamingAMissingThreadIsThreadNotFound),
        ("deletingAThreadRemovesEverythingItOwns", deletingAThreadRemovesEverythingItOwns),
        ("turnsKeepTheLatestAndUpdateInPlace", turnsKeepTheLatestAndUpdateInPlace),
        ("recordingATurnWritesHistoryTurnAndStatusTogether", recordingATurnWritesHistoryTurnAndStatusTogether),
        ("aPendingWaitRoundTripsAndEndsWithTheTurn", aPendingWaitRoundTripsAndEndsWithTheTurn),
    ]

    static func aPendingWaitRoundTripsAndEndsWithTheTurn(_ store: any RuntimeStateStore) async throws -> [String] {
        var problems: [String] = []
        let started = Date(timeIntervalSince1970: 1_800_000_000)
        var thread = AgentThread(title: "waits", createdAt: started)
        try await store.upsertThread(thread)
        let turn = AgentTurn(threadID: thread.id, status: .running, startedAt: started)
        try await store.recordTurn(turn, appending: [], threadStatus: .running, at: started)
        thread = try await store.thread(thread.id) ?? thread
        thread.pending = AgentThreadPendingState(
            kind: .approval, turnID: turn.id, invocation: ToolInvocation(id: "call_1", toolName: "pay", arguments: #"{"amount":5}"#),
            approvalRequestID: AgentApprovalID(rawValue: "approval-1"), since: Date(timeIntervalSince1970: 1_800_000_005)
        )
        thread.settle(.waiting, at: Date(timeIntervalSince1970: 1_800_000_005))
        try await store.upsertThread(thread)
        if try await store.thread(thread.id) != thread { problems.append("a pending wait did not round-trip") }
        var ended = turn
        ended.status = .interrupted
        try await store.recordTurn(ended, appending: [], threadStatus: .idle, at: Date(timeIntervalSince1970: 1_800_000_010))
        let stored = try await store.thread(thread.id)
        if stored?.pending != nil { problems.append("recording the turn's end left the pending wait") }
        if stored?.status != .idle { problems.append("recording the turn's end did not set the thread idle") }
        return problems
    }

    static func recordingATurnWritesHistoryTurnAndStatusTogether(_ store: any RuntimeStateStore) async throws -> [String] {
        var problems: [String] = []
        let thread = AgentThread(title: "kept title", createdAt: Date(timeIntervalSince1970: 1_800_000_000))
        try await store.upsertThread(thread)
        var turn = AgentTurn(threadID: thread.id, status: .running, startedAt: Date(timeIntervalSince1970: 1_800_000_010))
        let started = Date(timeIntervalSince1970: 1_800_000_010)
        let input: [AgentHistoryItem] = [
            .systemEvent(AgentSystemEvent(type: .turnStarted, turnID: turn.id, occurredAt: started)),
            .message(AgentMessage(threadID: thread.id, role: .user, text: "Where is my order?", createdAt: started)),
        ]
        try await store.recordTurn(turn, appending: input, threadStatus: .running, at: started)
        if try await store.thread(thread.id)?.status != .running { problems.append("the start did not set the thread running") }
        if try await store.latestTurn(of: thread.id) != turn { problems.append("the start did not record the turn") }
        turn.status = .completed
        turn.finishedAt = Date(timeIntervalSince1970: 1_800_000_020)
        let answer: [AgentHistoryItem] = [
            .message(AgentMessage(threadID: thread.id, role: .assistant, text: "Tuesday.", createdAt: started)),
            .systemEvent(AgentSystemEvent(type: .turnCompleted, turnID: turn.id, occurredAt: started)),
        ]
        try await store.recordTurn(turn, appending: answer, threadStatus: .idle, at: Date(timeIntervalSince1970: 1_800_000_020))
        let stored = try await store.thread(thread.id)
        if stored?.status != .idle { problems.append("the end did not set the thread idle") }
        if stored?.title != "kept title" { problems.append("recording a turn changed other thread fields") }
        if stored?.updatedAt != Date(timeIntervalSince1970: 1_800_000_020) { problems.append("recording a turn did not set updatedAt") }
        if try await store.latestTurn(of: thread.id) != turn { problems.append("the end did not replace the turn record") }
        let items = try await store.history(of: thread.id, query: AgentHistoryQuery()).items
        if items != input + answer { problems.append("history is \(items.count) items, not the 4 recorded in order") }
        let missing = AgentTurn(threadID: AgentThreadID(), status: .running)
        do {
            try await store.recordTurn(missing, appending: input, threadStatus: .running, at: started)
            problems.append("recording a turn of a missing thread succeeded")
        } catch {
            if try await store.latestTurn(of: missing.threadID) != nil { problems.append("a failed record left a turn behind") }
            if try await !store.history(of: missing.threadID, query: AgentHistoryQuery()).items.isEmpty {
                problems.append("a failed record left history behind")
            }
        }
        return problems
    }

    static func threadsRoundTripAndSortByUpdate(_ store: any RuntimeStateStore) async throws -> [String] {
        var problems: [String] = []
        let old = AgentThread(title: "old", configuration: .init(), accountBinding: "chatgpt:a", createdAt: Date(timeIntervalSince1970: 1_800_000_000))
        var recent = AgentThread(title: "recent", skillIDs: ["triage"], createdAt: Date(timeIntervalSince1970: 1_800_000_100))
        try await store.upsertThread(old)
        try await store.upsertThread(recent)
        if try await store.thread(old.id) != old { problems.append("a thread did not round-trip") }
        if try await store.threads().map(\.id) != [recent.id, old.id] { problems.append("threads are not most recently updated first") }
        recent.title = "renamed"
        recent.updatedAt = Date(timeIntervalSince1970: 1_800_000_000 - 1)
        try await store.upsertThread(recent)
        if try await store.thread(recent.id)?.title != "renamed" { problems.append("upsert did not replace") }
        if try await store.threads().map(\.id) != [old.id, recent.id] { problems.append("order did not follow the new update time") }
        if try await store.thread(AgentThreadID()) != nil { problems.append("an unknown thread was found") }
        return problems
    }

    static func historyKeepsOrderAndPagesBothWays(_ store: any RuntimeStateStore) async throws -> [String] {
        var problems: [String] = []
        let thread = AgentThread()
        try await store.upsertThread(thread)
        var all: [AgentHistoryItem] = []
        for index in 0..<5 {
            let items = sampleHistory(thread: thread.id, turn: AgentTurnID(), index: index)
            try await store.appendHistory(items, to: thread.id)
            all += items
        }
        var forward: [AgentHistoryItem] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = try await store.history(of: thread.id, query: AgentHistoryQuery(limit: 7, direction: .forward, cursor: cursor))
            forward += page.items
            cursor = page.nextCursor
            pages += 1
        } while cursor != nil && pages < 100
        if forward != all { problems.append("forward paging returned \(forward.count) items, not the \(all.count) appended in order") }
        if pages != 5 { problems.append("30 items in pages of 7 took \(pages) pages, not 5") }
        let newest = try await store.history(of: thread.id, query: AgentHistoryQuery(limit: 4, direction: .backward))
        if newest.items != Array(all.suffix(4).reversed()) { problems.append("backward paging is not newest first") }
        if newest.nextCursor == nil { problems.append("backward paging lost its cursor") }
        let whole = try await store.history(of: thread.id, query: AgentHistoryQuery())
        if whole.items.count != 30 || whole.nextCursor != nil { problems.append("the default page is not the whole short history") }
        if case .message(let answer) = whole.items[4], answer.phase != .finalAnswer { problems.append("a message phase was lost") }
        return problems
    }

    static func appendingToAMissingThreadFailsAndWritesNothing(_ store: any RuntimeStateStore) async throws -> [String] {
        let missing = AgentThreadID()
        do {
            try await store.appendHistory(sampleHistory(thread: missing, turn: AgentTurnID()), to: missing)
            return ["appending to a missing thread succeeded"]
        } catch {
            var problems = notFound(error, "appending to a missing thread")
            let page = try await store.history(of: missing, query: AgentHistoryQuery())
            if !page.items.isEmpty { problems.append("a failed append left items behind") }
            return problems
        }
    }

    static func everyWriteNamingAMissingThreadIsThreadNotFound(_ store: any RuntimeStateStore) async throws -> [String] {
        var problems: [String] = []
        let turn = AgentTurn(threadID: AgentThreadID(), status: .running)
        do {
            try await store.upsertTurn(turn)
            problems.append("upserting a turn of a missing thread succeeded")
        } catch {
            problems += notFound(error, "upserting a turn of a missing thread")
        }
        do {
            try await store.recordTurn(turn, appending: [], threadStatus: .running, at: Date(timeIntervalSince1970: 1_800_000_000))
            problems.append("recording a turn of a missing thread succeeded")
        } catch {
            problems += notFound(error, "recording a turn of a missing thread")
        }
        if try await store.latestTurn(of: turn.threadID) != nil { problems.append("a refused write left a turn behind") }
        return problems
    }

    /// The store's error must mean `thread_not_found`, and keep the store's own error when mapped.
    private static func notFound(_ error: any Error, _ what: String) -> [String] {
        let mapped = AgentRuntimeError.stateStore(error)
        var problems: [String] = []
        if mapped.code != .threadNotFound { problems.append("\(what) failed with \(mapped.code.rawValue), not thread_not_found") }
        if !(error is AgentRuntimeError), mapped.underlying == nil { problems.append("\(what): the store's error was not kept") }
        return problems
    }

    static func deletingAThreadRemovesEverythingItOwns(_ store: any RuntimeStateStore) async throws -> [String] {
        var problems: [String] = []
        let doomed = AgentThread()
        let kept = AgentThread()
        for thread in [doomed, kept] {
            try await store.upsertThread(thread)
            try await store.appendHistory(sampleHistory(thread: thread.id, turn: AgentTurnID()), to: thread.id)
            try await store.upsertTurn(AgentTurn(threadID: thread.id, status: .completed))
        }
        try await store.deleteThread(doomed.id)
        if try await store.thread(doomed.id) != nil { problems.append("the thread survived") }
        if try await !store.history(of: doomed.id, query: AgentHistoryQuery()).items.isEmpty { problems.append("its history survived") }
        if try await store.latestTurn(of: doomed.id) != nil { problems.append("its turns survived") }
        if try await store.history(of: kept.id, query: AgentHistoryQuery()).items.count != 6 { problems.append("another thread's history was touched") }
        try await store.deleteThread(doomed.id)
        return problems
    }

    static func turnsKeepTheLatestAndUpdateInPlace(_ store: any RuntimeStateStore) async throws -> [String] {
        var problems: [String] = []
        let thread = AgentThread()
        try await store.upsertThread(thread)
        let first = AgentTurn(threadID: thread.id, status: .completed, startedAt: Date(timeIntervalSince1970: 1_800_000_000))
        var second = AgentTurn(threadID: thread.id, status: .running, startedAt: Date(timeIntervalSince1970: 1_800_000_010))
        try await store.upsertTurn(first)
        try await store.upsertTurn(second)
        if try await store.latestTurn(of: thread.id) != second { problems.append("the latest turn is not the newest") }
        second.status = .interrupted
        second.finishedAt = Date(timeIntervalSince1970: 1_800_000_020)
        try await store.upsertTurn(second)
        if try await store.latestTurn(of: thread.id)?.status != .interrupted { problems.append("a turn update did not replace it") }
        return problems
    }
}
