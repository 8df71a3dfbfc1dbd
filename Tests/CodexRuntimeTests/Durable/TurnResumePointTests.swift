import CodexCore
@testable import CodexRuntime
import Testing

/// Where a journal leaves a durable turn, entry by entry, without tasks or a store.
@Suite struct TurnResumePointTests {
    static let settings = TurnJournalSettings(
        model: "gpt-6-astra", reasoningEffort: nil, instructions: "", skillInstructions: [], memoryInstructions: nil, memoryPlacement: .afterSkills
    )
    static let lookup = ToolInvocation(id: "c1", toolName: "lookup", arguments: "{}")
    static let charge = ToolInvocation(id: "c2", toolName: "charge", arguments: #"{"cents":5}"#)
    static let reasoning = AgentHistoryItem.reasoning(AgentReasoningItem(itemID: "rs", summary: ["Look, then charge."], encryptedContent: "gA"))

    static func batch(finished: [ToolResultEnvelope] = [], started: Set<ToolInvocationID> = [], approvals: [ToolInvocationID: TurnResumePoint.Approval] = [:]) -> TurnResumePoint.Stage {
        var batch = TurnResumePoint.Batch(pass: 1, items: [reasoning], calls: [lookup, charge])
        for result in finished { batch.finished[result.invocationID] = result }
        batch.started = started
        batch.approvals = approvals
        return .batch(batch)
    }

    @Test func eachPrefixOfAJournalLeavesTheTurnWhereItsLastEntrySays() {
        let request = AgentApprovalRequest(id: "ap1", threadID: AgentThreadID(rawValue: "t"), turnID: AgentTurnID(rawValue: "u"), toolInvocation: Self.charge, title: "charge")
        let journal: [TurnJournalEntry] = [
            .turnStarted(Self.settings),
            .modelRequest(pass: 1, attempt: 1, inputDigest: "d1"),
            .toolCalls(pass: 1, items: [Self.reasoning], calls: [Self.lookup, Self.charge]),
            .toolStarted("c1", idempotencyKey: "k1"),
            .toolFinished(.success(Self.lookup, text: "42")),
            .approvalRequested(request, digest: "dg"),
            .approvalAnswered("ap1", .approved),
            .toolStarted("c2", idempotencyKey: "k2"),
            .toolFinished(.success(Self.charge, text: "charged")),
            .modelRequest(pass: 2, attempt: 1, inputDigest: "d2"),
            .modelRequest(pass: 2, attempt: 2, inputDigest: "d2"),
            .committed,
        ]
        let approval = TurnResumePoint.Approval(request: request, digest: "dg")
        var answered = approval
        answered.decision = .approved
        let expected: [(TurnResumePoint.Stage, Int)] = [
            (.request(pass: 1, attempts: 0), 0),
            (.request(pass: 1, attempts: 1), 0),
            (Self.batch(), 2),
            (Self.batch(started: ["c1"]), 2),
            (Self.batch(finished: [.success(Self.lookup, text: "42")]), 2),
            (Self.batch(finished: [.success(Self.lookup, text: "42")], approvals: ["c2": approval]), 2),
            (Self.batch(finished: [.success(Self.lookup, text: "42")], approvals: ["c2": answered]), 2),
            (Self.batch(finished: [.success(Self.lookup, text: "42")], started: ["c2"], approvals: ["c2": answered]), 2),
            (Self.batch(finished: [.success(Self.lookup, text: "42"), .success(Self.charge, text: "charged")], approvals: ["c2": answered]), 2),
            (.request(pass: 2, attempts: 1), 2),
            (.request(pass: 2, attempts: 2), 2),
            (.committed, 2),
        ]
        for (length, (stage, used)) in expected.enumerated() {
            let point = TurnResumePoint.analyze(Array(journal.prefix(length + 1)))
            #expect(point?.stage == stage, "after \(length + 1) entries")
            #expect(point?.toolCallsUsed == used, "after \(length + 1) entries")
            #expect(point?.length == length + 1)
            #expect(point?.settings == Self.settings)
        }
    }

    @Test func aJournalThatDoesNotBeginATurnOrHasAnEntryOutOfPlaceIsNotResumed() {
        let started = TurnJournalEntry.turnStarted(Self.settings)
        let broken: [[TurnJournalEntry]] = [
            [],
            [.modelRequest(pass: 1, attempt: 1, inputDigest: "d")],
            [started, started],
            [started, .modelRequest(pass: 2, attempt: 1, inputDigest: "d")],
            [started, .toolStarted("c1", idempotencyKey: "k")],
            [started, .modelRequest(pass: 1, attempt: 1, inputDigest: "d"), .toolCalls(pass: 2, items: [], calls: [Self.lookup])],
            // The next pass's request before the batch finished.
            [started, .modelRequest(pass: 1, attempt: 1, inputDigest: "d"), .toolCalls(pass: 1, items: [], calls: [Self.lookup]), .modelRequest(pass: 2, attempt: 1, inputDigest: "e")],
            [started, .committed, .modelRequest(pass: 1, attempt: 1, inputDigest: "d")],
            [started, .modelRequest(pass: 1, attempt: 1, inputDigest: "d"), .toolCalls(pass: 1, items: [], calls: [Self.lookup]), .approvalAnswered("unknown", .denied)],
        ]
        for entries in broken {
            #expect(TurnResumePoint.analyze(entries) == nil, "\(entries.map(\.kind))")
        }
    }
}
