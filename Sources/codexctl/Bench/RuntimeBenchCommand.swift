import CodexCore
import CodexKitTesting
import CodexLoopback
import CodexRuntime
import CodexSchema
import Foundation

/// `codexctl bench runtime`: events per second from a backend to the consumer through the runtime next to
/// a bare `AsyncStream`, and streamed structured output next to one parse of the same payload.
enum RuntimeBenchCommand: CLICommand {
    static let name = "runtime"
    static let summary = "Runtime events per second and streamed structured output next to bare baselines."
    static let help = CommandHelp(
        command: "bench runtime",
        overview: """
        A plain text turn of --deltas deltas from the fixture backend read through AgentRuntime.stream, next to a \
        bare AsyncStream carrying the same events in the same run; then a --payload-mib MiB structured payload \
        streamed in 1 KiB deltas through stream(_:in:response:) (framing, partial snapshots, validation, decoding) \
        and sent as a one-shot reply through send(_:in:response:) (a short-reply turn subtracted), each next to one \
        parse of the same payload; then 1,000 turns of a 4-call parallel batch of no-op tools, per call \
        (turns without calls subtracted), next to the same executors in a bare TaskGroup; then what a durable \
        turn's journal costs per tool call (40 persistent turns of that batch on a SQLite store, durable minus not \
        durable), next to the same number of bare write+fsync calls to a plain file; then 550 whole one-pass \
        turns (500 timed) through the built-in backend, libcurl, a loopback server and a SQLite store, p50 and p99, \
        next to the same HTTP exchange alone; then rounds of 1, 10, 100 and 1,000 streamed turns at once (--concurrent), \
        all open together: CPU per turn, memory per open turn, events per second, p99 time to the first event and \
        descriptors left, next to the same exchanges without the runtime. Reports the peak RSS.
        """,
        options: [
            .flag("--json", "Print one JSON object (the shared benchmark shape)."),
            .value("--deltas", "n", "Text deltas per turn (default 100000)."),
            .value("--payload-mib", "n", "Structured payload size in MiB (default 4)."),
            .value("--runs", "n", "Runs per figure; the median is reported (default 5)."),
            .value("--only", "part", "Run one part only (for profiling): stream, one-shot, events, tools, journal, turns, concurrent or telemetry. The one parse baseline runs with stream and one-shot.")
                .suggesting(["stream", "one-shot", "events", "tools", "journal", "turns", "concurrent", "telemetry"]),
            .value("--concurrent", "n,…", "The rounds of the concurrency part: how many streamed turns run at once in each (default 1,10,100,1000; each 1 to 2000)."),
        ]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        guard let parsed = parse(arguments, validate: { try $0.expectNoPositionals() }) else { return Console.Status.usage }
        guard let deltas = Int(parsed.options["--deltas"] ?? "100000"), deltas > 0,
              let mebibytes = Int(parsed.options["--payload-mib"] ?? "4"), (1...4).contains(mebibytes),
              let runs = Int(parsed.options["--runs"] ?? "5"), runs > 0 else {
            return Console.usageFailure("--deltas and --runs must be positive; --payload-mib is 1 to 4", help: help)
        }
        let only = parsed.options["--only"]
        if let only, !RuntimeBenchmark.parts.contains(only) {
            return Console.usageFailure("--only is one of \(RuntimeBenchmark.parts.joined(separator: ", "))", help: help)
        }
        var levels: [Int]?
        if let text = parsed.options["--concurrent"] {
            let parsedLevels = text.split(separator: ",").compactMap { Int($0) }
            guard !parsedLevels.isEmpty, parsedLevels.count == text.split(separator: ",").count, parsedLevels.allSatisfy({ (1...2_000).contains($0) }) else {
                return Console.usageFailure("--concurrent takes counts from 1 to 2000, separated by commas", help: help)
            }
            levels = parsedLevels
        }
        do {
            var benchmark = RuntimeBenchmark(deltas: deltas, payloadBytes: mebibytes * 1024 * 1024 - 4096, runs: runs, only: only)
            benchmark.concurrencyLevels = levels
            let report = try await benchmark.run()
            report.print(json: parsed.has("--json"))
            return Console.Status.success
        } catch {
            CLIFailure(error).report(json: parsed.has("--json"))
            return Console.Status.failure
        }
    }
}

/// The structured payload of the benchmark: a catalog of small items.
struct BenchCatalog: AgentStructuredOutput {
    struct Item: Decodable, Sendable {
        let id: Int
        let name: String
        let tags: [String]
        let price: Double
    }

    let title: String
    let items: [Item]

    static let responseFormat = AgentStructuredOutputFormat(name: "bench_catalog", schema: .object(properties: [
        "title": .string(),
        "items": .array(items: .object(properties: ["id": .integer, "name": .string(), "tags": .array(items: .string()), "price": .number])),
    ]))
}

/// The runtime measurements.
struct RuntimeBenchmark {
    let deltas: Int
    let payloadBytes: Int
    let runs: Int
    /// The one part to run (`--only`), or nil for all of them.
    var only: String?
    /// The rounds of the concurrency part (`--concurrent`), or nil for 1, 10, 100 and 1,000.
    var concurrencyLevels: [Int]?

    /// The parts `--only` accepts.
    static let parts = ["stream", "one-shot", "events", "tools", "journal", "turns", "concurrent", "telemetry"]

    /// Whether `part` runs in this benchmark.
    func runs(_ part: String) -> Bool { only == nil || only == part }

    func run() async throws -> BenchReport {
        var report = BenchReport(suite: "runtime")
        if runs("stream") || runs("one-shot") { try await measureStructured(into: &report) }
        if runs("events") { try await measureEvents(into: &report) }
        if runs("tools") { try await measureToolBatches(into: &report) }
        if runs("journal") { try await measureJournal(into: &report) }
        if runs("turns") { try await measureWholeTurns(into: &report) }
        if runs("concurrent") { try await measureConcurrency(into: &report, levels: concurrencyLevels ?? Self.concurrencyLevels) }
        if runs("telemetry") { try await measureTelemetry(into: &report) }
        report.results.append(BenchResult(name: "process", mode: "peak RSS at the end", metric: "memory", value: Self.peakRSSMiB, unit: "MiB"))
        report.notes.append("fixture backend; in-memory store except the turn journal's turns (SQLite, synced); the runtime figure includes turn start, the commit and the event channel's hand-offs")
        return report
    }

    private func measureEvents(into report: inout BenchReport) async throws {
        let text = String(repeating: "x", count: deltas)
        var runtimeTimes: [Double] = []
        var bareTimes: [Double] = []
        for _ in 0..<runs {
            let runtime = try AgentRuntime(configuration: .init(
                backend: FixtureAgentBackend(turns: [.reply(text, deltaLength: 1)]), stateStore: InMemoryRuntimeStateStore(), turnLimits: .unlimited
            ))
            let thread = try await runtime.createThread()
            let clock = ContinuousClock()
            var started = clock.now
            var seen = 0
            for try await event in try await runtime.stream(Request(text: "bench"), in: thread.id) {
                if case .assistantMessageDelta = event { seen += 1 }
            }
            runtimeTimes.append((clock.now - started).inSeconds)
            guard seen == deltas else { throw AgentRuntimeError(code: .invalidRequest, message: "saw \(seen) of \(deltas) deltas") }

            started = clock.now
            let (stream, continuation) = AsyncStream<AgentEvent>.makeStream()
            let producer = Task {
                for _ in 0..<deltas { continuation.yield(.assistantMessageDelta(thread.id, AgentTurnID(rawValue: "bare"), "x")) }
                continuation.finish()
            }
            var bare = 0
            for await event in stream { if case .assistantMessageDelta = event { bare += 1 } }
            await producer.value
            bareTimes.append((clock.now - started).inSeconds)
            guard bare == deltas else { throw AgentRuntimeError(code: .invalidRequest, message: "bare stream lost events") }
        }
        report.results.append(BenchResult(
            name: "events", mode: "\(deltas) deltas backend→consumer", metric: "throughput", value: Double(deltas) / Self.median(runtimeTimes), unit: "events/s",
            baseline: ("bare AsyncStream of the same events", Double(deltas) / Self.median(bareTimes))
        ))
    }

    /// The payload and its framed prose, split into 1 KiB deltas.
    private func structuredInput() -> (payload: [UInt8], deltas: [String]) {
        var json = #"{"title":"Bench catalog","items":["#
        var index = 0
        while json.utf8.count < payloadBytes {
            if index > 0 { json += "," }
            json += #"{"id":\#(index),"name":"Item number \#(index) of the catalog","tags":["alpha","beta","gamma"],"price":\#(index % 1000).25}"#
            index += 1
        }
        json += "]}"
        let text = "Here is the catalog you asked for.\n\(StructuredBenchFraming.open)\n\(json)\n\(StructuredBenchFraming.close)\nDone."
        var deltas: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            deltas.append(String(rest.prefix(1024)))
            rest = rest.dropFirst(1024)
        }
        return (Array(json.utf8), deltas)
    }

    private func measureStructured(into report: inout BenchReport) async throws {
        let (payload, deltas) = structuredInput()
        var streamTimes: [Double] = []
        var parserTimes: [Double] = []
        var parseTimes: [Double] = []
        var decodeTimes: [Double] = []
        var oneShotTimes: [Double] = []
        var partials = 0
        var parserPartials = 0
        var parsedBytes = 0
        let steps = deltas.map { FixtureAgentBackend.Step.event(.assistantMessageDelta($0)) }
            + [.event(.assistantMessageCompleted(AgentMessage(threadID: AgentThreadID(rawValue: ""), role: .assistant, text: deltas.joined()))), .complete()]
        let rssBefore = Self.peakRSSMiB
        var rssAfterStream = 0.0
        for run in 0..<runs {
            let clock = ContinuousClock()
            var started = clock.now
            if runs("stream") {
                let runtime = try AgentRuntime(configuration: .init(
                    backend: FixtureAgentBackend(turns: [FixtureAgentBackend.Turn(steps)]), stateStore: InMemoryRuntimeStateStore(), turnLimits: .unlimited
                ))
                let thread = try await runtime.createThread()
                started = clock.now
                var committed = false
                partials = 0
                for try await event in try await runtime.stream(Request(text: "bench", executionMode: .ephemeral), in: thread.id, response: BenchCatalog.self) {
                    switch event {
                    case .structuredOutputPartial: partials += 1
                    case .structuredOutputCommitted: committed = true
                    default: break
                    }
                }
                streamTimes.append((clock.now - started).inSeconds)
                guard committed else { throw AgentRuntimeError(code: .structuredOutputMissing, message: "no committed payload") }
                if run == 0 { rssAfterStream = Self.peakRSSMiB }

                started = clock.now
                let alone = try StructuredStreamBenchmark.parse(deltas, format: BenchCatalog.responseFormat)
                parserTimes.append((clock.now - started).inSeconds)
                guard alone.committed else { throw AgentRuntimeError(code: .structuredOutputMissing, message: "the parser committed nothing") }
                parserPartials = alone.partials
                parsedBytes = alone.parsedBytes
            }
            started = clock.now
            _ = try JSONValue(parsing: payload)
            parseTimes.append((clock.now - started).inSeconds)
            if only == nil {
                started = clock.now
                _ = try JSONDecoder().decode(BenchCatalog.self, from: Data(payload))
                decodeTimes.append((clock.now - started).inSeconds)
            }
            if runs("one-shot") { oneShotTimes.append(try await measureOneShot(String(decoding: payload, as: UTF8.self))) }
        }
        let parse = ("one JSONValue parse of the payload", Self.median(parseTimes) * 1000)
        if runs("stream") {
            report.results.append(BenchResult(
                name: "process", mode: "peak RSS before the structured runs (inputs built)", metric: "memory", value: rssBefore, unit: "MiB"
            ))
            report.results.append(BenchResult(
                name: "process", mode: "peak RSS after the first runtime structured stream", metric: "memory", value: rssAfterStream, unit: "MiB"
            ))
            report.results.append(BenchResult(
                name: "structured frame parser", mode: "\(payload.count / 1024) KiB in 1 KiB deltas (\(parserPartials) partials, parsed \(String(format: "%.2f", Double(parsedBytes) / Double(payload.count)))x the payload)",
                metric: "latency", value: Self.median(parserTimes) * 1000, unit: "ms", bytes: payload.count, baseline: parse
            ))
            report.results.append(BenchResult(
                name: "structured stream through the runtime", mode: "\(payload.count / 1024) KiB in 1 KiB deltas (\(partials) partials emitted)", metric: "latency",
                value: Self.median(streamTimes) * 1000, unit: "ms", bytes: payload.count, baseline: parse
            ))
        }
        if runs("one-shot") {
            report.results.append(BenchResult(
                name: "one-shot structured reply through the runtime",
                mode: "\(payload.count / 1024) KiB in one message (parse, full validation, decode, value, digest, commit)", metric: "latency",
                value: Self.median(oneShotTimes) * 1000, unit: "ms", bytes: payload.count, baseline: parse
            ))
        }
        if runs("one-shot") { try measureOneShotStages(payload, into: &report) }
        if !decodeTimes.isEmpty {
            report.results.append(BenchResult(
                name: "Foundation JSONDecoder", mode: "one decode of the payload into the Swift type, for scale (the runtime decodes the parsed document with JSONValueDecoder)",
                metric: "latency", value: Self.median(decodeTimes) * 1000, unit: "ms", bytes: payload.count
            ))
        }
    }

    /// Where a one-shot reply's time goes: each stage of the runtime's acceptance timed on its own (median
    /// of the runs), each next to the same one parse.
    private func measureOneShotStages(_ payload: [UInt8], into report: inout BenchReport) throws {
        let validator = try BenchCatalog.responseFormat.validator()
        var stages: [String: [Double]] = [:]
        let clock = ContinuousClock()
        func time<T>(_ stage: String, _ body: () throws -> T) rethrows -> T {
            let started = clock.now
            let result = try body()
            stages[stage, default: []].append((clock.now - started).inSeconds)
            return result
        }
        for _ in 0..<runs {
            _ = time("one JSONValue parse") { try? JSONValue(parsing: payload) }
            let document = try time("parse into a document (tape)") { try JSONDocument(parsing: payload) }
            let result = try time("full validation of the document") { try validator.validate(document, mode: .full) }
            guard result.isValid else { throw AgentRuntimeError(code: .structuredOutputInvalid, message: "the bench payload does not validate") }
            let catalog = try time("decode from the document") { try JSONValueDecoder().decode(BenchCatalog.self, from: document) }
            guard !catalog.items.isEmpty else { throw AgentRuntimeError(code: .structuredOutputMissing, message: "no items decoded") }
            let value = time("the document's value") { document.value }
            let canonical = time("canonical bytes of the value") { value.canonicalBytes() }
            let fromTape = time("canonical bytes from the tape") { document.canonicalBytes() }
            guard fromTape == canonical else { throw AgentRuntimeError(code: .structuredOutputInvalid, message: "the tape's canonical bytes differ from the value's") }
            let digest = time("SHA-256 of the canonical bytes") { SHA256.hexDigest(of: canonical) }
            let metadata = time("the stored digest (canonical chunks from the tape into SHA-256)") {
                AgentStructuredOutputMetadata(formatName: "bench", payload: value, parsedAs: document)
            }
            guard metadata.payloadDigest == digest else {
                throw AgentRuntimeError(code: .structuredOutputInvalid, message: "the stored digest differs from the digest of the canonical bytes")
            }
        }
        let parse = Self.median(stages["one JSONValue parse"] ?? [])
        for stage in ["parse into a document (tape)", "full validation of the document", "decode from the document", "the document's value",
                      "canonical bytes of the value", "canonical bytes from the tape", "SHA-256 of the canonical bytes",
                      "the stored digest (canonical chunks from the tape into SHA-256)"] {
            report.results.append(BenchResult(
                name: "one-shot stage", mode: stage, metric: "latency", value: Self.median(stages[stage] ?? []) * 1000, unit: "ms", bytes: payload.count,
                baseline: ("one JSONValue parse of the payload", parse * 1000)
            ))
        }
    }

    /// One `send(_:in:response:)` turn whose reply is `json` in a single message (a one-shot structured
    /// reply), minus the same turn replying with a short text on the same runtime; returns seconds.
    private func measureOneShot(_ json: String) async throws -> Double {
        let runtime = try AgentRuntime(configuration: .init(
            backend: FixtureAgentBackend(turns: [.reply("ok", deltaLength: 2), .reply(json, deltaLength: json.utf8.count)]),
            stateStore: InMemoryRuntimeStateStore(), turnLimits: .unlimited
        ))
        let thread = try await runtime.createThread()
        let clock = ContinuousClock()
        var started = clock.now
        _ = try await runtime.send(Request(text: "bench", executionMode: .ephemeral), in: thread.id)
        let plain = (clock.now - started).inSeconds
        started = clock.now
        let catalog = try await runtime.send(Request(text: "bench", executionMode: .ephemeral), in: thread.id, response: BenchCatalog.self)
        let structured = (clock.now - started).inSeconds
        guard !catalog.items.isEmpty else { throw AgentRuntimeError(code: .structuredOutputMissing, message: "the one-shot reply decoded no items") }
        return max(0, structured - plain)
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    /// The peak resident memory so far, in MiB.
    static var peakRSSMiB: Double { Double(ProcessResources.peakResidentBytes ?? 0) / 1_048_576 }
}

/// The markers of a framed structured block, as the runtime's response contract describes them.
enum StructuredBenchFraming {
    static let open = "<codexkit_structured_output>"
    static let close = "</codexkit_structured_output>"
}
