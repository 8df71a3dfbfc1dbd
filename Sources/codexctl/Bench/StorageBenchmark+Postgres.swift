import CodexCore
import CodexStoragePostgres
import CodexStorageSQLite
import Foundation

extension StorageBenchmark {
    /// The same appends and restore on the PostgreSQL store at `connectionString` (in a scratch schema,
    /// dropped afterwards), each next to a raw libpq loop over the same rows in the same run.
    func measurePostgres(_ connectionString: String, into report: inout BenchReport) async throws {
        let schema = "codexkit_bench_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased())"
        defer { try? PostgresBaseline.dropSchema(connectionString: connectionString, schema: schema) }
        let store = try await PostgresRuntimeStateStore(connectionString: connectionString, schema: schema)
        let thread = AgentThreadID()
        let all = (0..<items).map { Self.item($0, thread: thread) }
        let rows = all.map(SQLiteRuntimeStateStore.encodedRow(of:))
        for (mode, perTransaction) in [("1 item per transaction", 1), ("10 items per transaction", 10)] {
            let storeThread = AgentThreadID()
            let rawThread = AgentThreadID()
            let handedOffThread = AgentThreadID()
            try await store.upsertThread(AgentThread(id: storeThread))
            try await store.upsertThread(AgentThread(id: rawThread))
            try await store.upsertThread(AgentThread(id: handedOffThread))
            let raw = try PostgresBaseline.InsertLoop(connectionString: connectionString, schema: schema, threadID: rawThread.rawValue)
            let handedOff = try PostgresBaseline.InsertLoop(connectionString: connectionString, schema: schema, threadID: handedOffThread.rawValue)
            let clock = ContinuousClock()
            let (storeSeconds, rawSeconds, handedOffSeconds, round) = try await interleavedAppends(
                all, rows: rows, perTransaction: perTransaction, into: store, thread: storeThread,
                handedOff: { rows in
                    try await Self.handedOff(rows, perTransaction: perTransaction) { _ = try handedOff.insert($0, perTransaction: perTransaction) }
                }
            ) {
                try raw.insert($0, perTransaction: perTransaction)
            }
            report.results.append(BenchResult(
                name: "postgres append", mode: "\(mode), \(round) interleaved rounds", metric: "throughput", value: Double(items) / storeSeconds, unit: "items/s",
                baseline: ("raw libpq prepared-statement loop", Double(items) / rawSeconds)
            ))
            report.results.append(BenchResult(
                name: "postgres append", mode: "\(mode), vs the raw loop with each transaction handed to a queue and awaited (the store's threading)",
                metric: "throughput", value: Double(items) / storeSeconds, unit: "items/s",
                baseline: ("raw libpq loop, handed off", Double(items) / handedOffSeconds)
            ))
            if perTransaction == 10 {
                let count = min(restoreItems, items)
                var times: [Double] = []
                var rawTimes: [Double] = []
                var floorTimes: [Double] = []
                for _ in 0..<5 {
                    let started = clock.now
                    let page = try await store.history(of: storeThread, query: AgentHistoryQuery(limit: count))
                    times.append((clock.now - started).inSeconds)
                    guard page.items.count == count else { throw PostgresStoreError(code: .failure, message: "restore returned \(page.items.count) items") }
                    rawTimes.append(try PostgresBaseline.selectLoop(connectionString: connectionString, schema: schema, threadID: rawThread.rawValue, count: count).seconds)
                    let floor = try PostgresBaseline.selectDecodeLoop(connectionString: connectionString, schema: schema, thread: rawThread, count: count)
                    guard floor.items == count else { throw PostgresStoreError(code: .failure, message: "the decoding select read \(floor.items) items") }
                    floorTimes.append(floor.seconds)
                }
                report.results.append(BenchResult(
                    name: "postgres restore", mode: "\(count)-item thread", metric: "latency", value: times.sorted()[2] * 1000, unit: "ms",
                    baseline: ("raw libpq select of the same rows (no decoding)", rawTimes.sorted()[2] * 1000)
                ))
                report.results.append(BenchResult(
                    name: "postgres restore", mode: "\(count)-item thread vs its floor", metric: "latency", value: times.sorted()[2] * 1000, unit: "ms",
                    baseline: ("raw libpq select decoding each row into a kept item (the store's row decoder)", floorTimes.sorted()[2] * 1000)
                ))
            }
        }
        let version = try await store.serverVersion()
        report.notes.append("PostgreSQL \(version / 10_000).\(version % 10_000) as the connection string names it (its own fsync and commit settings)")
    }
}
