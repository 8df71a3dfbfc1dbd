import CodexCore
import Foundation
import Testing

@Suite struct AgentUsageSummaryTests {
    static let records = [
        AgentUsageRecord(
            threadID: "thread-a", turnID: "turn-1", sequence: 0, accountBinding: "acct-a", model: "m1", recordedAt: Date(timeIntervalSince1970: 1_796_119_200),
            usage: AgentUsage(inputTokens: 1_000, cachedInputTokens: 400, outputTokens: 200, reasoningOutputTokens: 50, totalTokens: 1_200)
        ),
        AgentUsageRecord(
            threadID: "thread-a", turnID: "turn-1", sequence: 1, accountBinding: "acct-a", model: "m2", recordedAt: Date(timeIntervalSince1970: 1_796_169_599),
            usage: AgentUsage(inputTokens: 500, cacheWriteInputTokens: 100, outputTokens: 100)
        ),
        AgentUsageRecord(
            threadID: "thread-b", turnID: "turn-2", sequence: 0, accountBinding: nil, model: "m1", recordedAt: Date(timeIntervalSince1970: 1_796_169_600),
            usage: AgentUsage()
        ),
    ]

    static let prices = AgentPriceTable(entries: [
        AgentModelPrice(model: "m1", effectiveFrom: Date(timeIntervalSince1970: 1_767_225_600), input: Decimal(string: "1.25") ?? 0, cachedInput: Decimal(string: "0.125") ?? 0, output: 10),
    ])

    static func tally(_ known: Int, unknown: Int = 0) -> AgentTokenTally { AgentTokenTally(known: known, unknownCount: unknown) }

    @Test func groupsByModelSumOnlyKnownCountsAndCountTheUnknown() {
        let summary = AgentUsageSummary(Self.records, by: .model)
        #expect(summary.groups.map(\.key) == ["m1", "m2"])
        var m1 = AgentUsageTotals()
        m1.requestCount = 2
        m1.inputTokens = Self.tally(1_000, unknown: 1)
        m1.cachedInputTokens = Self.tally(400, unknown: 1)
        m1.cacheWriteInputTokens = Self.tally(0, unknown: 2)
        m1.outputTokens = Self.tally(200, unknown: 1)
        m1.reasoningOutputTokens = Self.tally(50, unknown: 1)
        m1.totalTokens = Self.tally(1_200, unknown: 1)
        #expect(summary.groups[0].totals == m1)
        let m2 = summary.groups[1].totals
        #expect(m2.requestCount == 1)
        #expect(m2.inputTokens == Self.tally(500) && m2.cacheWriteInputTokens == Self.tally(100) && m2.cachedInputTokens == Self.tally(0, unknown: 1))
        // No reported total: input + output.
        #expect(m2.totalTokens == Self.tally(600))
        #expect(m2.cost == nil)
        #expect(summary.overall.requestCount == 3)
        #expect(summary.overall.inputTokens == Self.tally(1_500, unknown: 1))
        #expect(summary.overall.totalTokens == Self.tally(1_800, unknown: 1))
        #expect(!summary.overall.inputTokens.isComplete && summary.groups[1].totals.inputTokens.isComplete)
    }

    @Test func everyGroupingHasItsKeys() {
        let keys = AgentUsageGrouping.all.map { grouping in (grouping.name, AgentUsageSummary(Self.records, by: grouping).groups.map(\.key)) }
        #expect(keys.map(\.0) == ["thread", "turn", "account", "model", "day"])
        #expect(keys.map(\.1) == [["thread-a", "thread-b"], ["turn-1", "turn-2"], ["acct-a", nil], ["m1", "m2"], ["2026-12-01", "2026-12-02"]])
        #expect(AgentUsageSummary(Self.records, by: .day).groups.map(\.totals.requestCount) == [2, 1])
        #expect(AgentUsageGrouping(name: "model") == .model)
        #expect(AgentUsageGrouping(name: "week") == nil)
        #expect(AgentUsageSummary([], by: .thread).groups.isEmpty)
        #expect(AgentUsageSummary([], by: .thread).overall == AgentUsageTotals())
    }

    @Test func pricesCostWhatTheyCanAndCountWhatTheyCannot() {
        let summary = AgentUsageSummary(Self.records, by: .model, prices: Self.prices)
        // m1 at 12:00 on 2026-12-01: 600 × 1.25 + 400 × 0.125 + 200 × 10 per million; the second m1
        // record reports no counts; m2 has no price.
        #expect(summary.groups[0].totals.cost == AgentUsageCost(amounts: ["USD": Decimal(string: "0.0028") ?? 0], uncostedCount: 1))
        #expect(summary.groups[1].totals.cost == AgentUsageCost(amounts: [:], uncostedCount: 1))
        #expect(summary.overall.cost == AgentUsageCost(amounts: ["USD": Decimal(string: "0.0028") ?? 0], uncostedCount: 2))
        #expect(summary.overall.cost?.isComplete == false)
        // Currencies are kept apart.
        var mixed = Self.prices
        mixed.entries.append(AgentModelPrice(model: "m2", effectiveFrom: .distantPast, currency: "EUR", input: 1, output: 1))
        #expect(AgentUsageSummary(Self.records, by: .account, prices: mixed).groups[0].totals.cost?.amounts == [
            "USD": Decimal(string: "0.0028") ?? 0, "EUR": Decimal(string: "0.0006") ?? 0,
        ])
    }

    @Test func aTallyNeverWrapsOrTraps() {
        var tally = AgentTokenTally()
        tally.add(Int.max)
        tally.add(1)
        tally.add(nil)
        #expect(tally == Self.tally(Int.max, unknown: 2))
    }

    @Test func anAccumulatorFedOneRecordAtATimeSumsAsTheWholeList() {
        var accumulator = AgentUsageSummary.Accumulator(by: .account, prices: Self.prices)
        #expect(accumulator.summary.groups.isEmpty)
        #expect(accumulator.summary.overall == AgentUsageTotals(priced: true))
        for record in Self.records.reversed() { accumulator.add(record) }
        let summary = accumulator.summary
        #expect(summary == AgentUsageSummary(Self.records, by: .account, prices: Self.prices))
        #expect(summary.groups.map(\.key) == ["acct-a", nil])
        #expect(summary.overall.requestCount == 3)
        #expect(summary.overall.inputTokens == Self.tally(1_500, unknown: 1))
        // Reading the summary does not end the accumulation.
        accumulator.add(Self.records[0])
        #expect(accumulator.summary.overall.requestCount == 4)
        #expect(accumulator.summary.groups[0].totals.inputTokens == Self.tally(2_500))
    }
}
