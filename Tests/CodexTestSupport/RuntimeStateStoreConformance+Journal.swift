import CodexCore
import Foundation

/// The durable-turn part of the store contract (``CodexCore/TurnJournaling``): journals, owner claims
/// and approvals, for every store.
extension RuntimeStateStoreConformance {
    static let journalChecks: [(String, @Sendable (any RuntimeStateStore) async throws -> [String])] = [
        ("aJournalKeepsItsOrderAndRefusesConflictsAndGaps", aJournalKeepsItsOrderAndRefusesConflictsAndGaps),
        ("aTurnIsClaimedByExactlyOneOwner", aTurnIsClaimedByExactlyOneOwner),
        ("anApprovalIsAnsweredOnceForItsDigest", anApprovalIsAnsweredOnceForItsDigest),
        ("deletingAThreadDeletesItsJournalsAndApprovals", deletingAThreadDeletesItsJournalsAndApprovals),
    ]

    /// The store as a journal, or a problem when it is not one.
    static func journaling(_ store: any RuntimeStateStore) -> (any TurnJournaling)? {
        store as? any TurnJournaling
    }

    /// What `body` threw, as a failure meaning (nil when it did not throw).
    static func failure(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch {
            return AgentRuntimeError.stateStore(error).code.rawValue
        }
    }

    static let sampleSettings = TurnJournalSettings(
        model: "gpt-6-astra", reasoningEffort: .low, instructions: "Be brief.", skillInstructions: ["Triage."], memoryInstructions: nil,
        memoryPlacement: .afterSkills
    )

    static func aJournalKeepsItsOrderAndRefusesConflictsAndGaps(_ store: any RuntimeStateStore) async throws -> [String] {
        guard let journal = journaling(store) else { return ["the store keeps no journals"] }
        var problems: [String] = []
        let thread = AgentThread(title: "durable")
        try await store.upsertThread(thread)
        let turn = AgentTurnID()
        let call = ToolInvocation(id: "call_1", toolName: "charge", arguments: #"{"cents":500}"#)
        let entries: [TurnJournalEntry] = [
            .turnStarted(sampleSettings), .modelRequest(pass: 1, attempt: 1, inputDigest: "abc"),
            .toolCalls(pass: 1, items: [.reasoning(AgentReasoningItem(itemID: "rs_1", summary: ["Charge it."], encryptedContent: "gAAA"))], calls: [call]),
            .toolStarted("call_1", idempotencyKey: "key-1"), .toolFinished(.success(call, text: "charged")),
            .approvalRequested(AgentApprovalRequest(threadID: thread.id, turnID: turn, toolInvocation: call, title: "charge"), digest: "d1"),
            .approvalAnswered(AgentApprovalID(rawValue: "approval-1"), .approved), .committed,
        ]
        for (sequence, entry) in entries.enumerated() { try await journal.appendJournal(entry, sequence: sequence, turn: turn, thread: thread.id) }
        if try await journal.journal(of: turn) != entries { problems.append("the journal did not round-trip in order") }
        if try await !journal.journal(of: AgentTurnID()).isEmpty { problems.append("a turn without a journal has entries") }
        // The same entry again under its number is accepted and writes nothing.
        try await journal.appendJournal(entries[3], sequence: 3, turn: turn, thread: thread.id)
        if try await journal.journal(of: turn).count != entries.count { problems.append("appending an entry again added one") }
        let conflict = await failure { try await journal.appendJournal(.committed, sequence: 2, turn: turn, thread: thread.id) }
        if conflict != "storage_conflict" { problems.append("another entry under a taken number gave \(conflict ?? "no error")") }
        let gap = await failure { try await journal.appendJournal(.committed, sequence: entries.count + 1, turn: turn, thread: thread.id) }
        if gap != "storage_conflict" { problems.append("a gap gave \(gap ?? "no error")") }
        let missing = await failure { try await journal.appendJournal(.committed, sequence: 0, turn: AgentTurnID(), thread: AgentThreadID()) }
        if missing != "thread_not_found" { problems.append("a journal of a missing thread gave \(missing ?? "no error")") }
        if try await journal.journal(of: turn) != entries { problems.append("a refused append changed the journal") }
        return problems
    }

    static func aTurnIsClaimedByExactlyOneOwner(_ store: any RuntimeStateStore) async throws -> [String] {
        guard let journal = journaling(store) else { return ["the store keeps no journals"] }
        var problems: [String] = []
        let started = Date(timeIntervalSince1970: 1_800_000_000)
        let thread = AgentThread(title: "claims", createdAt: started)
        try await store.upsertThread(thread)
        let turn = AgentTurn(threadID: thread.id, status: .running, startedAt: started, ownerID: "dead-owner")
        try await store.recordTurn(turn, appending: [], threadStatus: .running, at: started)
        let claimed = Date(timeIntervalSince1970: 1_800_000_050)
        // Two claimants that both read the dead owner: exactly one wins.
        async let first = journal.claimTurn(turn.id, of: thread.id, from: "dead-owner", to: "owner-a", at: claimed)
        async let second = journal.claimTurn(turn.id, of: thread.id, from: "dead-owner", to: "owner-b", at: claimed)
        let outcomes = try await [first, second]
        if outcomes.filter({ $0 }).count != 1 { problems.append("two claims from the same owner gave \(outcomes)") }
        let owner = try await store.latestTurn(of: thread.id)?.ownerID
        if owner != (outcomes[0] ? "owner-a" : "owner-b") { problems.append("the winner is not the owner: \(owner ?? "none")") }
        if try await journal.claimTurn(turn.id, of: thread.id, from: nil, to: "owner-c", at: claimed) {
            problems.append("a claim from the wrong owner succeeded")
        }
        // A parked turn is claimed and runs again; an ended one is not claimed.
        var parked = try await store.latestTurn(of: thread.id) ?? turn
        parked.status = .waitingForApproval
        parked.ownerID = nil
        try await store.upsertTurn(parked)
        if try await !journal.claimTurn(turn.id, of: thread.id, from: nil, to: "owner-d", at: claimed) { problems.append("a parked turn could not be claimed") }
        let resumed = try await store.latestTurn(of: thread.id)
        if resumed?.status != .running || resumed?.ownerID != "owner-d" { problems.append("a claimed parked turn is \(resumed?.status.rawValue ?? "-")") }
        if try await store.thread(thread.id)?.status != .running { problems.append("a claim did not set the thread running") }
        var ended = resumed ?? turn
        ended.status = .completed
        try await store.upsertTurn(ended)
        if try await journal.claimTurn(turn.id, of: thread.id, from: "owner-d", to: "owner-e", at: claimed) { problems.append("an ended turn was claimed") }
        return problems
    }

    static func anApprovalIsAnsweredOnceForItsDigest(_ store: any RuntimeStateStore) async throws -> [String] {
        guard let journal = journaling(store) else { return ["the store keeps no journals"] }
        var problems: [String] = []
        let thread = AgentThread(title: "approvals")
        try await store.upsertThread(thread)
        let call = ToolInvocation(id: "call_9", toolName: "refund", arguments: #"{"cents":100}"#)
        let asked = Date(timeIntervalSince1970: 1_800_000_000)
        let first = StoredApproval(request: AgentApprovalRequest(threadID: thread.id, turnID: AgentTurnID(), toolInvocation: call, title: "refund"), digest: "d-1", requestedAt: asked)
        let second = StoredApproval(
            request: AgentApprovalRequest(threadID: thread.id, turnID: AgentTurnID(), toolInvocation: call, title: "refund"), digest: "d-2",
            requestedAt: asked.addingTimeInterval(5)
        )
        try await journal.saveApproval(second)
        try await journal.saveApproval(first)
        try await journal.saveApproval(first)
        if try await journal.approvals(in: thread.id).map(\.id) != [first.id, second.id] { problems.append("approvals are not listed oldest first, once each") }
        if try await journal.approvals(in: nil).count != 2 { problems.append("all approvals are not listed") }
        if try await journal.approval(first.id) != first { problems.append("an approval did not round-trip") }
        if try await journal.approval(AgentApprovalID()) != nil { problems.append("an unknown approval was found") }
        let stale = await failure { _ = try await journal.answerApproval(first.id, decision: .approved, expectedDigest: "other", at: asked) }
        if stale != "storage_conflict" { problems.append("an answer for another digest gave \(stale ?? "no error")") }
        let answered = try await journal.answerApproval(first.id, decision: .approved, expectedDigest: "d-1", at: asked.addingTimeInterval(60))
        if answered.decision != .approved || answered.answeredAt != asked.addingTimeInterval(60) { problems.append("the answer was not stored") }
        if try await journal.approval(first.id)?.isPending != false { problems.append("an answered approval is still pending") }
        let again = try await journal.answerApproval(first.id, decision: .approved, expectedDigest: nil, at: asked.addingTimeInterval(90))
        if again.answeredAt != asked.addingTimeInterval(60) { problems.append("the same answer again changed the record") }
        let changed = await failure { _ = try await journal.answerApproval(first.id, decision: .denied, expectedDigest: nil, at: asked) }
        if changed != "storage_conflict" { problems.append("another answer gave \(changed ?? "no error")") }
        let unknown = await failure { _ = try await journal.answerApproval(AgentApprovalID(), decision: .denied, expectedDigest: nil, at: asked) }
        if unknown != "approval_not_found" { problems.append("answering an unknown approval gave \(unknown ?? "no error")") }
        return problems
    }

    static func deletingAThreadDeletesItsJournalsAndApprovals(_ store: any RuntimeStateStore) async throws -> [String] {
        guard let journal = journaling(store) else { return ["the store keeps no journals"] }
        var problems: [String] = []
        let doomed = AgentThread(title: "doomed")
        let kept = AgentThread(title: "kept")
        try await store.upsertThread(doomed)
        try await store.upsertThread(kept)
        let doomedTurn = AgentTurnID()
        let keptTurn = AgentTurnID()
        try await journal.appendJournal(.turnStarted(sampleSettings), sequence: 0, turn: doomedTurn, thread: doomed.id)
        try await journal.appendJournal(.turnStarted(sampleSettings), sequence: 0, turn: keptTurn, thread: kept.id)
        let call = ToolInvocation(id: "call_1", toolName: "pay", arguments: "{}")
        for thread in [doomed, kept] {
            try await journal.saveApproval(StoredApproval(
                request: AgentApprovalRequest(threadID: thread.id, turnID: AgentTurnID(), toolInvocation: call, title: "pay"), digest: "d", requestedAt: Date()
            ))
        }
        try await store.deleteThread(doomed.id)
        if try await !journal.journal(of: doomedTurn).isEmpty { problems.append("a deleted thread's journal is left") }
        if try await !journal.approvals(in: doomed.id).isEmpty { problems.append("a deleted thread's approvals are left") }
        let keptJournal = try await journal.journal(of: keptTurn)
        let keptApprovals = try await journal.approvals(in: kept.id)
        if keptJournal.count != 1 || keptApprovals.count != 1 { problems.append("another thread's journal or approvals went too") }
        return problems
    }
}
