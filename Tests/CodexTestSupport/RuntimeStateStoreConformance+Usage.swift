import CodexCore
import Foundation

/// The usage-ledger part of the store contract (``CodexCore/UsageRecording``), for every store.
extension RuntimeStateStoreConformance {
    static let usageChecks: [(String, @Sendable (any RuntimeStateStore) async throws -> [String])] = [
        ("usageRecordsRoundTripWithEveryField", usageRecordsRoundTripWithEveryField),
        ("recordingUsageAgainReplacesTheRecord", recordingUsageAgainReplacesTheRecord),
        ("usageRecordsAreOrderedByDateTurnAndSequence", usageRecordsAreOrderedByDateTurnAndSequence),
        ("everyUsageFilterSelectsExactlyItsRecords", everyUsageFilterSelectsExactlyItsRecords),
        ("usageSinceIsInclusiveAndUntilExclusive", usageSinceIsInclusiveAndUntilExclusive),
        ("usageForAMissingThreadWritesNothing", usageForAMissingThreadWritesNothing),
        ("deletingAThreadDeletesItsUsage", deletingAThreadDeletesItsUsage),
        ("anEmptyUsageBatchIsANoOp", anEmptyUsageBatchIsANoOp),
        ("visitingTheLedgerSeesEveryRecordOnceAcrossPages", visitingTheLedgerSeesEveryRecordOnceAcrossPages),
        ("aRecordNoStoreCouldReadBackIsRefused", aRecordNoStoreCouldReadBackIsRefused),
    ]

    /// The store as a usage ledger, or `nil` when it is not one.
    static func ledger(_ store: any RuntimeStateStore) -> (any UsageRecording)? {
        store as? any UsageRecording
    }

    static let usageEpoch = Date(timeIntervalSince1970: 1_800_000_000)

    /// A record with every count known.
    static func fullUsage(_ scale: Int = 1) -> AgentUsage {
        AgentUsage(
            inputTokens: 1_200 * scale, cachedInputTokens: 1_024 * scale, cacheWriteInputTokens: 64 * scale, outputTokens: 300 * scale,
            reasoningOutputTokens: 128 * scale, totalTokens: 1_500 * scale
        )
    }

    static func usageRecordsRoundTripWithEveryField(_ store: any RuntimeStateStore) async throws -> [String] {
        guard let ledger = ledger(store) else { return ["the store keeps no usage ledger"] }
        var problems: [String] = []
        let thread = AgentThread(title: "ledger")
        try await store.upsertThread(thread)
        let turn = AgentTurnID(rawValue: "turn-round-trip")
        let full = AgentUsageRecord(
            threadID: thread.id, turnID: turn, sequence: 0, accountBinding: "acct-1", model: "gpt-6-astra",
            recordedAt: usageEpoch.addingTimeInterval(0.123_456), usage: fullUsage()
        )
        // Every count unknown, no account: nothing may come back as zero or as an empty string.
        let empty = AgentUsageRecord(
            threadID: thread.id, turnID: turn, sequence: 1, accountBinding: nil, model: "gpt-6-astra-mini", recordedAt: usageEpoch.addingTimeInterval(1),
            usage: AgentUsage()
        )
        let partial = AgentUsageRecord(
            threadID: thread.id, turnID: turn, sequence: 2, accountBinding: "", model: "m", recordedAt: usageEpoch.addingTimeInterval(2),
            usage: AgentUsage(inputTokens: 0, outputTokens: 7)
        )
        try await ledger.recordUsage([full, empty, partial])
        let stored = try await ledger.usageRecords(matching: AgentUsageQuery())
        if stored != [full, empty, partial] { problems.append("the records did not round-trip exactly: \(stored)") }
        if stored.count == 3 {
            if stored[1].usage.inputTokens != nil || stored[1].usage.totalTokens != nil || stored[1].accountBinding != nil {
                problems.append("unknown counts or a missing account came back as values")
            }
            if stored[2].accountBinding != "" || stored[2].usage.inputTokens != 0 || stored[2].usage.cachedInputTokens != nil {
                problems.append("an empty account or a zero count changed")
            }
            if stored[0].recordedAt != full.recordedAt { problems.append("the recorded date lost precision") }
        }
        return problems
    }

    static func recordingUsageAgainReplacesTheRecord(_ store: any RuntimeStateStore) async throws -> [String] {
        guard let ledger = ledger(store) else { return ["the store keeps no usage ledger"] }
        var problems: [String] = []
        let thread = AgentThread(title: "replace")
        let other = AgentThread(title: "moved")
        try await store.upsertThread(thread)
        try await store.upsertThread(other)
        let turn = AgentTurnID(rawValue: "turn-replace")
        let first = AgentUsageRecord(threadID: thread.id, turnID: turn, sequence: 0, model: "gpt-6-astra", recordedAt: usageEpoch, usage: fullUsage())
        let second = AgentUsageRecord(threadID: thread.id, turnID: turn, sequence: 1, model: "gpt-6-astra", recordedAt: usageEpoch, usage: fullUsage(2))
        try await ledger.recordUsage([first, second])
        try await ledger.recordUsage([first, second])
        if try await ledger.usageRecords(matching: AgentUsageQuery()) != [first, second] { problems.append("recording the same batch again changed the ledger") }
        var changed = first
        changed.usage = AgentUsage(inputTokens: 5, outputTokens: 6)
        changed.accountBinding = "acct-2"
        changed.model = "gpt-6-astra-mini"
        changed.recordedAt = usageEpoch.addingTimeInterval(60)
        changed.threadID = other.id
        try await ledger.recordUsage([changed])
        let stored = try await ledger.usageRecords(matching: AgentUsageQuery())
        if stored != [second, changed] { problems.append("a changed record did not replace the stored one: \(stored)") }
        // The filter columns follow the replacement.
        if try await ledger.usageRecords(matching: AgentUsageQuery(threadID: other.id)) != [changed] { problems.append("the replaced record is not under its new thread") }
        if try await !ledger.usageRecords(matching: AgentUsageQuery(model: "gpt-6-astra", since: usageEpoch.addingTimeInterval(30))).isEmpty {
            problems.append("the replaced record is still found by its old model")
        }
        // Within one batch, the last record of a key wins.
        var last = second
        last.usage = AgentUsage(outputTokens: 1)
        try await ledger.recordUsage([second, last])
        if try await ledger.usageRecords(matching: AgentUsageQuery(turnID: turn)) != [last, changed] { problems.append("the last record of a key in a batch did not win") }
        return problems
    }

    static func usageRecordsAreOrderedByDateTurnAndSequence(_ store: any RuntimeStateStore) async throws -> [String] {
        guard let ledger = ledger(store) else { return ["the store keeps no usage ledger"] }
        let thread = AgentThread(title: "order")
        try await store.upsertThread(thread)
        func record(_ turn: String, _ sequence: Int, _ seconds: Double) -> AgentUsageRecord {
            AgentUsageRecord(
                threadID: thread.id, turnID: AgentTurnID(rawValue: turn), sequence: sequence, model: "gpt-6-astra", recordedAt: usageEpoch.addingTimeInterval(seconds),
                usage: AgentUsage(inputTokens: sequence)
            )
        }
        // Sequence 10 after 9 (numbers, not text); turn "B" before "a" (byte order); the date first.
        let expected = [record("b", 0, 0), record("a", 2, 1), record("B", 0, 5), record("a", 0, 5), record("a", 9, 5), record("a", 10, 5), record("a", 1, 9)]
        try await ledger.recordUsage(expected.reversed())
        let stored = try await ledger.usageRecords(matching: AgentUsageQuery())
        guard stored == expected else {
            return ["the order was \(stored.map { "\($0.turnID)/\($0.sequence)" }), not \(expected.map { "\($0.turnID)/\($0.sequence)" })"]
        }
        return []
    }

    static func everyUsageFilterSelectsExactlyItsRecords(_ store: any RuntimeStateStore) async throws -> [String] {
        guard let ledger = ledger(store) else { return ["the store keeps no usage ledger"] }
        var problems: [String] = []
        let one = AgentThread(title: "one")
        let two = AgentThread(title: "two")
        try await store.upsertThread(one)
        try await store.upsertThread(two)
        let records = [
            AgentUsageRecord(threadID: one.id, turnID: "t1", sequence: 0, accountBinding: "acct-a", model: "gpt-6-astra", recordedAt: usageEpoch, usage: fullUsage()),
            AgentUsageRecord(threadID: one.id, turnID: "t1", sequence: 1, accountBinding: "acct-a", model: "gpt-6-astra-mini", recordedAt: usageEpoch.addingTimeInterval(1), usage: fullUsage()),
            AgentUsageRecord(threadID: one.id, turnID: "t2", sequence: 0, accountBinding: nil, model: "gpt-6-astra", recordedAt: usageEpoch.addingTimeInterval(2), usage: fullUsage()),
            AgentUsageRecord(threadID: two.id, turnID: "t3", sequence: 0, accountBinding: "acct-b", model: "gpt-6-astra", recordedAt: usageEpoch.addingTimeInterval(3), usage: fullUsage()),
        ]
        try await ledger.recordUsage(records)
        let cases: [(String, AgentUsageQuery, [Int])] = [
            ("everything", AgentUsageQuery(), [0, 1, 2, 3]),
            ("thread", AgentUsageQuery(threadID: one.id), [0, 1, 2]),
            ("another thread", AgentUsageQuery(threadID: two.id), [3]),
            ("an unknown thread", AgentUsageQuery(threadID: AgentThreadID()), []),
            ("turn", AgentUsageQuery(turnID: "t1"), [0, 1]),
            ("account", AgentUsageQuery(accountBinding: "acct-a"), [0, 1]),
            ("an account no record has", AgentUsageQuery(accountBinding: ""), []),
            ("model", AgentUsageQuery(model: "gpt-6-astra"), [0, 2, 3]),
            ("a model prefix", AgentUsageQuery(model: "gpt-6"), []),
            ("thread and model", AgentUsageQuery(threadID: one.id, model: "gpt-6-astra"), [0, 2]),
            ("every filter", AgentUsageQuery(threadID: one.id, turnID: "t1", accountBinding: "acct-a", model: "gpt-6-astra-mini", since: usageEpoch, until: usageEpoch.addingTimeInterval(2)), [1]),
        ]
        for (name, query, indices) in cases {
            let found = try await ledger.usageRecords(matching: query)
            if found != indices.map({ records[$0] }) { problems.append("the \(name) filter found \(found.map { "\($0.turnID)/\($0.sequence)" })") }
        }
        return problems
    }

    static func usageSinceIsInclusiveAndUntilExclusive(_ store: any RuntimeStateStore) async throws -> [String] {
        guard let ledger = ledger(store) else { return ["the store keeps no usage ledger"] }
        var problems: [String] = []
        let thread = AgentThread(title: "dates")
        try await store.upsertThread(thread)
        // Dates a microsecond apart, and one with a fraction that a double in seconds since 1970 rounds.
        let dates = [usageEpoch.addingTimeInterval(-0.000_001), usageEpoch, usageEpoch.addingTimeInterval(0.000_001), usageEpoch.addingTimeInterval(10)]
        let records = dates.enumerated().map { index, date in
            AgentUsageRecord(threadID: thread.id, turnID: "dated", sequence: index, model: "gpt-6-astra", recordedAt: date, usage: AgentUsage(inputTokens: index))
        }
        try await ledger.recordUsage(records)
        let cases: [(String, AgentUsageQuery, [Int])] = [
            ("since a record's date", AgentUsageQuery(since: dates[1]), [1, 2, 3]),
            ("until a record's date", AgentUsageQuery(until: dates[1]), [0]),
            ("since and until one date", AgentUsageQuery(since: dates[1], until: dates[1]), []),
            ("since one date until the next", AgentUsageQuery(since: dates[1], until: dates[2]), [1]),
            ("until the last date", AgentUsageQuery(until: dates[3]), [0, 1, 2]),
            ("since after the last date", AgentUsageQuery(since: dates[3].addingTimeInterval(0.5)), []),
        ]
        for (name, query, indices) in cases {
            let found = try await ledger.usageRecords(matching: query)
            if found != indices.map({ records[$0] }) { problems.append("\(name) found \(found.map(\.sequence)), not \(indices)") }
        }
        return problems
    }

    static func usageForAMissingThreadWritesNothing(_ store: any RuntimeStateStore) async throws -> [String] {
        guard let ledger = ledger(store) else { return ["the store keeps no usage ledger"] }
        var problems: [String] = []
        let thread = AgentThread(title: "present")
        try await store.upsertThread(thread)
        let kept = AgentUsageRecord(threadID: thread.id, turnID: "kept", sequence: 0, model: "gpt-6-astra", recordedAt: usageEpoch, usage: fullUsage())
        try await ledger.recordUsage([kept])
        var replaced = kept
        replaced.usage = AgentUsage(inputTokens: 1)
        let orphan = AgentUsageRecord(threadID: AgentThreadID(), turnID: "orphan", sequence: 0, model: "gpt-6-astra", recordedAt: usageEpoch, usage: fullUsage())
        let fresh = AgentUsageRecord(threadID: thread.id, turnID: "fresh", sequence: 0, model: "gpt-6-astra", recordedAt: usageEpoch, usage: fullUsage())
        let missing = await failure { try await ledger.recordUsage([replaced, fresh, orphan]) }
        if missing != "thread_not_found" { problems.append("a batch naming a missing thread gave \(missing ?? "no error")") }
        if try await ledger.usageRecords(matching: AgentUsageQuery()) != [kept] { problems.append("a refused batch wrote or replaced records") }
        return problems
    }

    static func deletingAThreadDeletesItsUsage(_ store: any RuntimeStateStore) async throws -> [String] {
        guard let ledger = ledger(store) else { return ["the store keeps no usage ledger"] }
        var problems: [String] = []
        let doomed = AgentThread(title: "doomed")
        let kept = AgentThread(title: "kept")
        try await store.upsertThread(doomed)
        try await store.upsertThread(kept)
        let keptRecord = AgentUsageRecord(threadID: kept.id, turnID: "kept-turn", sequence: 0, model: "gpt-6-astra", recordedAt: usageEpoch, usage: fullUsage())
        try await ledger.recordUsage([
            AgentUsageRecord(threadID: doomed.id, turnID: "doomed-turn", sequence: 0, model: "gpt-6-astra", recordedAt: usageEpoch, usage: fullUsage()),
            AgentUsageRecord(threadID: doomed.id, turnID: "doomed-turn", sequence: 1, model: "gpt-6-astra", recordedAt: usageEpoch, usage: fullUsage()),
            keptRecord,
        ])
        try await store.deleteThread(doomed.id)
        if try await !ledger.usageRecords(matching: AgentUsageQuery(threadID: doomed.id)).isEmpty { problems.append("a deleted thread's usage records are left") }
        if try await ledger.usageRecords(matching: AgentUsageQuery()) != [keptRecord] { problems.append("another thread's usage records went too") }
        // A thread of the same ID made again starts with an empty ledger.
        try await store.upsertThread(doomed)
        if try await !ledger.usageRecords(matching: AgentUsageQuery(threadID: doomed.id)).isEmpty { problems.append("a recreated thread got old usage back") }
        return problems
    }

    static func anEmptyUsageBatchIsANoOp(_ store: any RuntimeStateStore) async throws -> [String] {
        guard let ledger = ledger(store) else { return ["the store keeps no usage ledger"] }
        var problems: [String] = []
        try await ledger.recordUsage([])
        if try await !ledger.usageRecords(matching: AgentUsageQuery()).isEmpty { problems.append("an empty batch wrote records") }
        let thread = AgentThread(title: "empty")
        try await store.upsertThread(thread)
        let record = AgentUsageRecord(threadID: thread.id, turnID: "t", sequence: 0, model: "gpt-6-astra", recordedAt: usageEpoch, usage: fullUsage())
        try await ledger.recordUsage([record])
        try await ledger.recordUsage([])
        if try await ledger.usageRecords(matching: AgentUsageQuery()) != [record] { problems.append("an empty batch changed the ledger") }
        return problems
    }

    static func visitingTheLedgerSeesEveryRecordOnceAcrossPages(_ store: any RuntimeStateStore) async throws -> [String] {
        guard let ledger = ledger(store) else { return ["the store keeps no usage ledger"] }
        var problems: [String] = []
        let thread = AgentThread(title: "pages")
        let other = AgentThread(title: "other pages")
        try await store.upsertThread(thread)
        try await store.upsertThread(other)
        // 2,600 records: 1,300 recorded at one instant (a tie that spans a durable store's page of 1,000,
        // with turn IDs in byte order and numeric sequences), the rest a millisecond apart on either side,
        // every fifth on another thread.
        var records: [AgentUsageRecord] = []
        for index in 0..<2_600 {
            let tied = (650..<1_950).contains(index)
            let date = tied ? usageEpoch : usageEpoch.addingTimeInterval(Double(index - 1_300) / 1_000)
            records.append(AgentUsageRecord(
                threadID: index % 5 == 0 ? other.id : thread.id, turnID: AgentTurnID(rawValue: "turn-\(index % 7)"), sequence: index,
                model: index % 3 == 0 ? "gpt-6-astra-mini" : "gpt-6-astra", recordedAt: date, usage: AgentUsage(inputTokens: index, outputTokens: 1)
            ))
        }
        for start in stride(from: 0, to: records.count, by: 500) { try await ledger.recordUsage(Array(records[start..<min(start + 500, records.count)])) }
        let cases: [(String, AgentUsageQuery)] = [
            ("every record", AgentUsageQuery()),
            ("one thread", AgentUsageQuery(threadID: thread.id)),
            ("one model", AgentUsageQuery(model: "gpt-6-astra")),
            ("since the tie", AgentUsageQuery(since: usageEpoch)),
            ("until the tie", AgentUsageQuery(until: usageEpoch)),
        ]
        for (name, query) in cases {
            let expected = records.filter(query.matches)
            let listed = try await ledger.usageRecords(matching: query)
            if listed != expected.sorted(by: AgentUsageRecord.ledgerOrder) { problems.append("\(name): the list held \(listed.count) records, not the \(expected.count) expected in ledger order") }
            var visited: [AgentUsageRecord] = []
            try await ledger.forEachUsageRecord(matching: query) { visited.append($0) }
            if visited.count != expected.count || Set(visited.map { "\($0.turnID)/\($0.sequence)" }).count != expected.count {
                problems.append("\(name): the visit saw \(visited.count) records, \(Set(visited.map(\.sequence)).count) distinct, not \(expected.count)")
            }
            if visited.sorted(by: AgentUsageRecord.ledgerOrder) != listed { problems.append("\(name): the visit saw other records than the list") }
            if zip(visited, visited.dropFirst()).contains(where: { $0.recordedAt > $1.recordedAt }) { problems.append("\(name): the visit was not ordered by date") }
        }
        // A body that throws ends the visit where it threw, with its error.
        struct Enough: Error {}
        var seen = 0
        do {
            try await ledger.forEachUsageRecord(matching: AgentUsageQuery()) { _ in
                seen += 1
                if seen == 1_500 { throw Enough() }
            }
            problems.append("a body that threw did not end the visit with its error")
        } catch is Enough {
            if seen != 1_500 { problems.append("the visit went on after its body threw: \(seen) records") }
        }
        return problems
    }

    static func aRecordNoStoreCouldReadBackIsRefused(_ store: any RuntimeStateStore) async throws -> [String] {
        guard let ledger = ledger(store) else { return ["the store keeps no usage ledger"] }
        var problems: [String] = []
        let thread = AgentThread(title: "refused")
        try await store.upsertThread(thread)
        let good = AgentUsageRecord(threadID: thread.id, turnID: "refused", sequence: 0, model: "gpt-6-astra", recordedAt: usageEpoch, usage: fullUsage())
        var negative = good
        negative.sequence = 1
        negative.usage = AgentUsage(inputTokens: 10, outputTokens: -1)
        var farFuture = good
        farFuture.sequence = 2
        farFuture.recordedAt = Date(timeIntervalSince1970: 253_402_300_800)  // 10000-01-01T00:00:00Z
        for (name, bad) in [("a negative count", negative), ("a date in year 10000", farFuture)] {
            if await failure({ try await ledger.recordUsage([good, bad]) }) == nil { problems.append("a record with \(name) was stored") }
        }
        if try await !ledger.usageRecords(matching: AgentUsageQuery()).isEmpty { problems.append("a refused batch wrote records") }
        // The last second of year 9999 is kept.
        var lastSecond = good
        lastSecond.recordedAt = Date(timeIntervalSince1970: 253_402_300_799)
        try await ledger.recordUsage([lastSecond])
        if try await ledger.usageRecords(matching: AgentUsageQuery()) != [lastSecond] { problems.append("the last second of year 9999 did not round-trip") }
        return problems
    }
}
