import CodexCore
import CodexStorageSQLite
import Foundation

/// `codexctl bench memory`: search latency of the SQLite memory store over a large store, next to the
/// same ranking statement stepped on a bare prepared statement in the same run.
enum MemoryBenchCommand: CLICommand {
    static let name = "memory"
    static let summary = "SQLite memory store: search p50 and p99 over 100,000 records next to the raw FTS5 statement."
    static let help = CommandHelp(
        command: "bench memory",
        overview: """
        Fill a SQLite memory store with synthetic records (16 to 32 words each from a 4,000-word vocabulary, skewed \
        so some words are common), then time searches of 2 to 4 words (any word, and all of 2 words) with the default \
        read budget: p50 and p99 of the store's search next to the same FTS5 ranking SQL run through a bare prepared \
        statement, query by query in the same run. WAL, synchronous=FULL.
        """,
        options: [
            .flag("--json", "Print one JSON object (the shared benchmark shape)."),
            .value("--records", "n", "Records in the store (default 100000)."),
            .value("--queries", "n", "Timed queries per mode (default 2000)."),
            .value("--directory", "dir", "Where the database goes (default the temporary directory)."),
        ]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        guard let parsed = parse(arguments) else { return Console.Status.usage }
        guard let records = Int(parsed.options["--records"] ?? "100000"), records >= 100,
              let queries = Int(parsed.options["--queries"] ?? "2000"), queries >= 10 else {
            return Console.usageFailure("--records must be at least 100 and --queries at least 10", help: help)
        }
        let base = parsed.options["--directory"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory
        let directory = base.appendingPathComponent("codexkit-bench-memory-\(UUID().uuidString.lowercased())")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let report = try await MemoryBenchmark(path: directory.appendingPathComponent("memory.sqlite").path, records: records, queries: queries).run()
            report.print(json: parsed.has("--json"))
            return Console.Status.success
        } catch {
            CLIFailure(error).report(json: parsed.has("--json"))
            return Console.Status.failure
        }
    }
}

/// The memory measurements.
struct MemoryBenchmark {
    let path: String
    let records: Int
    let queries: Int

    /// A deterministic generator (SplitMix64).
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    static let syllables = ["ka", "lo", "mi", "ner", "to", "sa", "vi", "dor", "pel", "qua", "ri", "ston", "ba", "fen", "gu", "hal",
                            "jo", "lex", "mar", "nu", "or", "pra", "sil", "tem", "ul", "vor", "wen", "xi", "yal", "zen"]
    static let vocabularySize = 4_000

    /// Word `index` of the vocabulary: its base-30 digits as syllables.
    static func word(_ index: Int) -> String {
        var index = index + 30
        var text = ""
        while index > 0 {
            text += syllables[index % 30]
            index /= 30
        }
        return text
    }

    /// A word, skewed towards the start of the vocabulary (the square of a uniform draw).
    static func skewedWord(_ generator: inout Generator) -> String {
        let u = generator.unit()
        return word(min(vocabularySize - 1, Int(Double(vocabularySize) * u * u)))
    }

    func makeRecords() -> [MemoryRecord] {
        var generator = Generator(state: 42)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let scopes: [MemoryScope] = [.global, .user, .project, "team"]
        return (0..<records).map { index in
            let words = (0..<(16 + generator.below(17))).map { _ in Self.skewedWord(&generator) }
            return MemoryRecord(
                id: MemoryRecordID(rawValue: "m-\(index)"), namespace: "bench", scope: scopes[generator.below(scopes.count)],
                category: .fact, summary: words.joined(separator: " ") + ".", importance: generator.below(11), tags: ["t\(generator.below(20))"],
                dedupeKey: "k-\(index)", createdAt: start.addingTimeInterval(Double(index))
            )
        }
    }

    func run() async throws -> BenchReport {
        var report = BenchReport(suite: "memory")
        let all = makeRecords()
        let store = try SQLiteMemoryStore(path: path)
        let clock = ContinuousClock()
        let started = clock.now
        var index = 0
        while index < all.count {
            try await store.insertForBenchmark(Array(all[index..<min(all.count, index + 1_000)]))
            index += 1_000
        }
        let fillSeconds = (clock.now - started).inSeconds
        try store.checkpoint()
        report.results.append(BenchResult(name: "fill", mode: "1,000 records per transaction", metric: "throughput", value: Double(records) / fillSeconds, unit: "records/s"))
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        report.results.append(BenchResult(name: "database", mode: "bytes per record", metric: "size", value: Double(size) / Double(records), unit: "bytes"))
        let raw = try SQLiteMemoryBaseline(path: path)
        var generator = Generator(state: 7)
        var candidates = 0
        var hits = 0
        for (mode, words, match) in [("any of 2-4 words", 0, MemoryQuery.MatchPolicy.anyToken), ("all of 2 words", 2, .allTokens)] {
            var storeTimes: [Double] = []
            var rawTimes: [Double] = []
            for round in 0..<(queries + 100) {
                let count = words > 0 ? words : 2 + generator.below(3)
                let text = (0..<count).map { _ in Self.skewedWord(&generator) }.joined(separator: " ")
                let query = MemoryQuery(namespace: "bench", text: text, match: match, asOf: Date(timeIntervalSince1970: 1_800_000_000))
                let storeStart = clock.now
                let result = try await store.search(query)
                let storeTime = (clock.now - storeStart).inSeconds
                let rawStart = clock.now
                let rows = try raw.run(query)
                let rawTime = (clock.now - rawStart).inSeconds
                guard rows == result.candidates else {
                    throw CLIFailure.Thrown(code: "bench_mismatch", message: "the raw statement returned \(rows) rows, the store ranked \(result.candidates)")
                }
                // The first 100 queries warm the caches and are not timed.
                if round >= 100 {
                    storeTimes.append(storeTime * 1000)
                    rawTimes.append(rawTime * 1000)
                    candidates += result.candidates
                    hits += result.hits.count
                }
            }
            storeTimes.sort()
            rawTimes.sort()
            for (label, fraction) in [("p50", 0.5), ("p99", 0.99)] {
                let position = min(storeTimes.count - 1, Int(Double(storeTimes.count) * fraction))
                report.results.append(BenchResult(
                    name: "search \(label)", mode: "\(mode), \(records) records", metric: "latency", value: storeTimes[position], unit: "ms",
                    baseline: ("raw FTS5 statement (same SQL, bare prepared statement)", rawTimes[position])
                ))
            }
        }
        report.notes.append("\(queries) timed queries per mode after 100 untimed; on average \(candidates / (2 * queries)) ranked candidates and \(hits / (2 * queries)) hits per query (default budget: 8 records, 1,600 characters)")
        report.notes.append("journal_mode=WAL, synchronous=FULL; SQLite \(SQLiteRuntimeStateStore.sqliteVersion)")
        return report
    }
}
