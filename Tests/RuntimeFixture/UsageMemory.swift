import CodexCore
import CodexKitTesting
import CodexLoopback
import CodexStorageSQLite
import Foundation

/// `usage-memory --db PATH --records N [--list]`: records N usage records in a new SQLite store (in
/// batches of 1,000), then sums them by model the way `codexctl usage` does, from a store opened
/// read-only; prints `requests=<count> groups=<count> baseline=<KiB> peak=<KiB>` (`VmHWM` after the
/// writes and at the end), so a test can see that memory follows the groups, not the ledger. `--list`
/// sums a list of every record instead (what `usage` did before it read the ledger as a stream), for a
/// mutation check. Under a sanitizer both figures are the sanitizer allocator's live bytes instead.
enum UsageMemory {
    static func run(_ option: (String) -> String?, list: Bool) async throws {
        guard let path = option("--db"), let count = option("--records").flatMap(Int.init) else {
            throw AgentRuntimeError(code: .invalidRequest, message: "usage: usage-memory --db PATH --records N [--list]")
        }
        do {
            let store = try SQLiteRuntimeStateStore(path: path)
            let thread = AgentThread(title: "ledger")
            try await store.upsertThread(thread)
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            for batch in stride(from: 0, to: count, by: 1_000) {
                let records = (batch..<min(batch + 1_000, count)).map { index in
                    AgentUsageRecord(
                        threadID: thread.id, turnID: AgentTurnID(rawValue: "turn-\(index / 4)"), sequence: index % 4, accountBinding: "acct-1",
                        model: "gpt-6-astra", recordedAt: start.addingTimeInterval(Double(index)),
                        usage: AgentUsage(inputTokens: 1_200, cachedInputTokens: 1_024, outputTokens: 300, reasoningOutputTokens: 128, totalTokens: 1_500)
                    )
                }
                try await store.recordUsage(records)
            }
        }
        let baseline = (Self.measure ?? 0) / 1024
        let reader = try SQLiteRuntimeStateStore(readingAt: path)
        let summary: AgentUsageSummary
        if list {
            summary = AgentUsageSummary(try await reader.usageRecords(matching: AgentUsageQuery()), by: .model)
        } else {
            var accumulator = AgentUsageSummary.Accumulator(by: .model)
            try await reader.forEachUsageRecord(matching: AgentUsageQuery()) { accumulator.add($0) }
            summary = accumulator.summary
        }
        let peak = (Self.measure ?? 0) / 1024
        FileHandle.standardOutput.write(Data("requests=\(summary.overall.requestCount) groups=\(summary.groups.count) baseline=\(baseline) peak=\(peak)\n".utf8))
    }

    /// The peak resident set in an ordinary build; the allocator's live bytes under a sanitizer.
    private static var measure: Int? {
        Sanitizer.active == .none ? ProcessResources.peakResidentBytes : Sanitizer.liveHeapBytes
    }
}
