import CodexCore
import CodexStorageSQLite
import Foundation

/// `codexctl bench storage`: history appends (single and batched), restore and paging of the SQLite
/// state store, each next to a raw prepared-statement loop over the same rows.
enum StorageBenchCommand: CLICommand {
    static let name = "storage"
    static let summary = "State stores: appends, restore and paging next to raw SQLite (and libpq) loops."
    static let help = CommandHelp(
        command: "bench storage",
        overview: """
        Append realistic history items (~300 bytes: user and assistant messages, function calls and outputs) one \
        transaction per item and 10 per transaction, in about ten rounds alternating with the raw loop, restore a 10,000-item thread and page through it, each next to a \
        raw prepared-statement loop doing the same inserts or selects in the same run, plus the cost of an empty append; appends also next to the raw loop \
        with each transaction handed to a queue and awaited, as the store runs its writes; restore also next to a raw select \
        that decodes and keeps every row with the store's row decoder. WAL, synchronous=FULL. With --postgres, the same \
        appends and restore on the PostgreSQL store next to raw libpq prepared-statement loops on the same server.
        """,
        options: [
            .flag("--json", "Print one JSON object (the shared benchmark shape)."),
            .value("--items", "n", "Items appended per mode (default 100000)."),
            .value("--restore", "n", "Items in the restored thread (default 10000)."),
            .value("--directory", "dir", "Where the databases go (default the temporary directory)."),
            .value("--postgres", "url", "Also measure the PostgreSQL store at this database (in a scratch schema, dropped afterwards) next to raw libpq loops."),
            .flag("--postgres-only", "With --postgres, skip the SQLite figures."),
        ]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        guard let parsed = parse(arguments, validate: { parsed in
            if parsed.has("--postgres-only"), parsed.options["--postgres"] == nil { throw UsageError("--postgres-only needs --postgres <url>") }
        }) else { return Console.Status.usage }
        guard let items = Int(parsed.options["--items"] ?? "100000"), items >= 10, let restore = Int(parsed.options["--restore"] ?? "10000"), restore > 0 else {
            return Console.usageFailure("--items must be at least 10 and --restore positive", help: help)
        }
        let base = parsed.options["--directory"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory
        let directory = base.appendingPathComponent("codexkit-bench-storage-\(UUID().uuidString.lowercased())")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let benchmark = StorageBenchmark(directory: directory, items: items, restoreItems: restore)
            var report = parsed.has("--postgres-only") ? BenchReport(suite: "storage") : try await benchmark.run()
            if let url = parsed.options["--postgres"] { try await benchmark.measurePostgres(url, into: &report) }
            report.print(json: parsed.has("--json"))
            return Console.Status.success
        } catch {
            CLIFailure(error).report(json: parsed.has("--json"))
            return Console.Status.failure
        }
    }
}

/// The storage measurements.
struct StorageBenchmark {
    let directory: URL
    let items: Int
    let restoreItems: Int

    /// Realistic items of about 300 encoded bytes, cycling through four kinds.
    static func item(_ index: Int, thread: AgentThreadID) -> AgentHistoryItem {
        let created = Date(timeIntervalSince1970: 1_800_000_000 + Double(index))
        let invocation = ToolInvocation(
            id: ToolInvocationID(rawValue: "call_\(index)"), toolName: "lookup_order", arguments: #"{"order_id":"A-\#(index)","include":"tracking"}"#
        )
        switch index % 4 {
        case 0: return .message(AgentMessage(threadID: thread, role: .user, text: "Where is my order A-\(index)? It was due yesterday.", createdAt: created))
        case 1: return .toolCall(invocation)
        case 2: return .toolResult(.success(invocation, text: "Order A-\(index): shipped, carrier DHL, arriving Tuesday."))
        default:
            return .message(AgentMessage(
                threadID: thread, role: .assistant, text: "Your order A-\(index) shipped and arrives Tuesday.", phase: .finalAnswer, createdAt: created
            ))
        }
    }

    /// Items per interleaved round: about ten rounds (the last may be partial), each a whole number of
    /// transactions.
    static func roundItems(items: Int, perTransaction: Int) -> Int {
        max(perTransaction, (items / 10) / perTransaction * perTransaction)
    }

    /// Appends `all` to `thread` of `store`, `perTransaction` items per call, in about ten rounds that
    /// alternate with `raw` inserting the same rows' bytes (and, when given, `handedOff` doing the same
    /// with each transaction run on a queue of its own), the order rotated each round: the loops wait on
    /// the same disk's fsyncs, and its speed drifts over a run; alternating cancels the drift.
    /// - Returns: The seconds the store, the raw loop and the handed-off loop took, and the number of rounds.
    func interleavedAppends(
        _ all: [AgentHistoryItem], rows: [(kind: String, body: [UInt8])], perTransaction: Int, into store: any RuntimeStateStore, thread: AgentThreadID,
        handedOff: ((ArraySlice<(kind: String, body: [UInt8])>) async throws -> Double)? = nil,
        raw: (ArraySlice<(kind: String, body: [UInt8])>) throws -> Double
    ) async throws -> (store: Double, raw: Double, handedOff: Double, rounds: Int) {
        let roundItems = Self.roundItems(items: all.count, perTransaction: perTransaction)
        let clock = ContinuousClock()
        func storeRound(_ range: Range<Int>) async throws -> Double {
            let started = clock.now
            for index in stride(from: range.lowerBound, to: range.upperBound, by: perTransaction) {
                try await store.appendHistory(Array(all[index..<min(range.upperBound, index + perTransaction)]), to: thread)
            }
            return (clock.now - started).inSeconds
        }
        var storeSeconds = 0.0
        var rawSeconds = 0.0
        var handedOffSeconds = 0.0
        var round = 0
        let participants = handedOff == nil ? 2 : 3
        for start in stride(from: 0, to: all.count, by: roundItems) {
            let range = start..<min(all.count, start + roundItems)
            for offset in 0..<participants {
                switch (round + offset) % participants {
                case 0: storeSeconds += try await storeRound(range)
                case 1: rawSeconds += try raw(rows[range])
                default: handedOffSeconds += try await handedOff?(rows[range]) ?? 0
                }
            }
            round += 1
        }
        return (storeSeconds, rawSeconds, handedOffSeconds, round)
    }

    /// Runs `transaction` on each `perTransaction` rows of `rows` in turn, each handed to a serial queue
    /// and awaited through a continuation, as the stores run their writes (off the caller's thread): the
    /// floor of that threading, with none of a store's own work.
    /// - Returns: The seconds it took.
    static func handedOff(
        _ rows: ArraySlice<(kind: String, body: [UInt8])>, perTransaction: Int,
        _ transaction: @escaping @Sendable (ArraySlice<(kind: String, body: [UInt8])>) throws -> Void
    ) async throws -> Double {
        let queue = DispatchQueue(label: "codexkit.bench.handed-off-writer")
        let clock = ContinuousClock()
        let started = clock.now
        var index = rows.startIndex
        while index < rows.endIndex {
            let batch = rows[index..<min(rows.endIndex, index + max(1, perTransaction))]
            try await queue.perform { () throws(any Error) in try transaction(batch) }
            index += batch.count
        }
        return (clock.now - started).inSeconds
    }

    func run() async throws -> BenchReport {
        var report = BenchReport(suite: "storage")
        let thread = AgentThreadID()
        let all = (0..<items).map { Self.item($0, thread: thread) }
        let rows = all.map(SQLiteRuntimeStateStore.encodedRow(of:))

        for (mode, perTransaction) in [("1 item per transaction", 1), ("10 items per transaction", 10)] {
            let path = directory.appendingPathComponent("store-\(perTransaction).sqlite").path
            let store = try SQLiteRuntimeStateStore(path: path)
            try await store.upsertThread(AgentThread(id: thread))
            let rawPath = directory.appendingPathComponent("raw-\(perTransaction).sqlite").path
            let raw = try SQLiteBaseline.InsertLoop(path: rawPath, threadID: thread.rawValue)
            let handedOffPath = directory.appendingPathComponent("raw-handed-off-\(perTransaction).sqlite").path
            let handedOff = try SQLiteBaseline.InsertLoop(path: handedOffPath, threadID: thread.rawValue)
            let clock = ContinuousClock()
            let (storeSeconds, rawSeconds, handedOffSeconds, round) = try await interleavedAppends(
                all, rows: rows, perTransaction: perTransaction, into: store, thread: thread,
                handedOff: { rows in
                    try await Self.handedOff(rows, perTransaction: perTransaction) { _ = try handedOff.insert($0, perTransaction: perTransaction) }
                }
            ) {
                try raw.insert($0, perTransaction: perTransaction)
            }
            report.results.append(BenchResult(
                name: "append", mode: "\(mode), \(round) interleaved rounds", metric: "throughput", value: Double(items) / storeSeconds, unit: "items/s",
                baseline: ("raw prepared-statement loop", Double(items) / rawSeconds)
            ))
            report.results.append(BenchResult(
                name: "append", mode: "\(mode), vs the raw loop with each transaction handed to a queue and awaited (the store's threading)",
                metric: "throughput", value: Double(items) / storeSeconds, unit: "items/s",
                baseline: ("raw loop, handed off", Double(items) / handedOffSeconds)
            ))
            if perTransaction == 1 {
                // What a transaction costs the store before any row or fsync: an empty append still hands
                // off to the write thread and back and runs both lookups, then commits nothing.
                let calls = 2_000
                let started = clock.now
                for _ in 0..<calls { try await store.appendHistory([], to: thread) }
                report.results.append(BenchResult(
                    name: "append", mode: "an empty append (the write-thread hand-off and the two lookups; nothing written, no fsync)",
                    metric: "latency", value: (clock.now - started).inSeconds / Double(calls) * 1_000_000, unit: "µs"
                ))
            }
            if perTransaction == 10 {
                try store.checkpoint()
                try raw.checkpoint()
                let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
                report.results.append(BenchResult(name: "database", mode: "bytes per item", metric: "size", value: Double(size) / Double(items), unit: "bytes"))
                try await measureRestore(store, thread: thread, rawPath: rawPath, bodies: rows.prefix(restoreItems).map(\.body), into: &report)
            }
        }
        report.notes.append("journal_mode=WAL, synchronous=FULL (a committed item survives power loss); SQLite \(SQLiteRuntimeStateStore.sqliteVersion)")
        return report
    }

    private func measureRestore(
        _ store: SQLiteRuntimeStateStore, thread: AgentThreadID, rawPath: String, bodies: [[UInt8]], into report: inout BenchReport
    ) async throws {
        let count = min(restoreItems, items)
        let clock = ContinuousClock()
        var times: [Double] = []
        var raw: [Double] = []
        var decoded: [Double] = []
        var inMemory: [Double] = []
        for _ in 0..<5 {
            let started = clock.now
            let page = try await store.history(of: thread, query: AgentHistoryQuery(limit: count))
            times.append((clock.now - started).inSeconds)
            guard page.items.count == count else { throw SQLiteStoreError(code: .failure, message: "restore returned \(page.items.count) items") }
            raw.append(try SQLiteBaseline.selectLoop(path: rawPath, threadID: thread.rawValue, count: count).seconds)
            let floor = try SQLiteBaseline.selectDecodeLoop(path: rawPath, count: count, thread: thread)
            guard floor.items == count else { throw SQLiteStoreError(code: .failure, message: "the decoding select read \(floor.items) items") }
            decoded.append(floor.seconds)
            let decoding = try SQLiteBaseline.decodeLoop(bodies, thread: thread)
            guard decoding.items == count else { throw SQLiteStoreError(code: .failure, message: "the in-memory decoding read \(decoding.items) items") }
            inMemory.append(decoding.seconds)
        }
        report.results.append(BenchResult(
            name: "restore", mode: "\(count)-item thread", metric: "latency", value: times.sorted()[2] * 1000, unit: "ms",
            baseline: ("raw select of the same rows (no decoding)", raw.sorted()[2] * 1000)
        ))
        report.results.append(BenchResult(
            name: "restore", mode: "\(count)-item thread vs its floor", metric: "latency", value: times.sorted()[2] * 1000, unit: "ms",
            baseline: ("raw select decoding each row into a kept item (the store's row decoder)", decoded.sorted()[2] * 1000)
        ))
        report.results.append(BenchResult(
            name: "restore", mode: "decoding \(count) rows in memory (the store's row decoder, no SQLite)", metric: "latency",
            value: inMemory.sorted()[2] * 1000, unit: "ms"
        ))
        var pageTimes: [Double] = []
        for _ in 0..<3 {
            let started = clock.now
            var cursor: String?
            var seen = 0
            repeat {
                let page = try await store.history(of: thread, query: AgentHistoryQuery(limit: AgentHistoryQuery.defaultLimit, cursor: cursor))
                seen += page.items.count
                cursor = seen < count ? page.nextCursor : nil
            } while cursor != nil
            pageTimes.append((clock.now - started).inSeconds)
        }
        report.results.append(BenchResult(
            name: "page", mode: "\(count) items in pages of \(AgentHistoryQuery.defaultLimit)", metric: "latency", value: pageTimes.sorted()[1] * 1000, unit: "ms"
        ))
    }
}
