import CodexCore
import CodexLoopback
import CodexTransport
import Foundation

/// `codexctl bench sse`: SSE framing and Responses decoding throughput on `Benchmarks/sse/text-stream.sse`.
enum SSEBenchCommand: CLICommand {
    static let name = "sse"
    static let summary = "SSE framing, event decoding and streaming throughput."
    static let help = CommandHelp(
        command: "bench sse",
        overview: """
        Read Benchmarks/sse/text-stream.sse 16 times in a row in 16 KiB chunks (about 92 MB, 320,128 events) and report \
        MB/s and events/s for (a) framing only, (b) framing plus decoding into typed events, in memory, and (c) the same \
        through a loopback HTTP server and the default transport, libcurl (16 requests), each next to a plain newline \
        count over the same bytes. Also reports the peak resident memory while streaming.
        """,
        options: [
            .flag("--json", "Print one JSON object (the shared benchmark shape)."),
            .value("--runs", "n", "Runs per figure; the median is reported (default 5)."),
            .value("--passes", "n", "How many times the stream is read per run (default 16)."),
            .value("--stream", "file", "The stream to read (default Benchmarks/sse/text-stream.sse of this checkout)."),
            .value("--only", "part", "Run one part only: framing, decoding or transport (for profiling).").suggesting(["framing", "decoding", "transport"]),
        ]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        guard let parsed = parse(arguments) else { return Console.Status.usage }
        guard let runs = Int(parsed.options["--runs"] ?? "5"), runs > 0, let passes = Int(parsed.options["--passes"] ?? "16"), passes > 0 else {
            return Console.usageFailure("--runs and --passes must be positive integers", help: help)
        }
        let path = parsed.options["--stream"].map { URL(fileURLWithPath: $0) } ?? BenchData.directory("sse").appendingPathComponent("text-stream.sse")
        do {
            let bytes = [UInt8](try Data(contentsOf: path))
            let report = try await SSEBenchmark(stream: bytes, passes: passes, runs: runs, only: parsed.options["--only"]).run()
            report.print(json: parsed.has("--json"))
            return Console.Status.success
        } catch {
            CLIFailure(error).report(json: parsed.has("--json"))
            return Console.Status.failure
        }
    }
}

/// The three SSE measurements.
struct SSEBenchmark {
    let stream: [UInt8]
    let passes: Int
    let runs: Int
    let only: String?
    static let chunkSize = 16 * 1024

    private func wants(_ part: String) -> Bool { only == nil || only == part }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    func run() async throws -> BenchReport {
        var report = BenchReport(suite: "sse")
        let totalBytes = Double(stream.count * passes)
        var newlines = 0
        let newlineSeconds = try median { newlines = countNewlines() }
        let newlineRate = totalBytes / 1e6 / newlineSeconds

        let events = try frameOnly()
        if wants("framing") {
            let framingSeconds = try median { _ = try frameOnly() }
            report.results.append(rate("framing", bytes: totalBytes, seconds: framingSeconds, baseline: newlineRate))
            report.results.append(eventRate("framing", events: events, seconds: framingSeconds))
        }
        if wants("decoding") {
            var decoded = 0
            let decodingSeconds = try median { decoded = try frameAndDecode() }
            guard decoded == events else { throw Failure(description: "decoded \(decoded) events, framed \(events)") }
            report.results.append(rate("framing+decoding", bytes: totalBytes, seconds: decodingSeconds, baseline: newlineRate))
            report.results.append(eventRate("framing+decoding", events: decoded, seconds: decodingSeconds))
        }
        guard wants("transport") else {
            report.notes.append("\(events) events, \(newlines) newlines and \(Int(totalBytes)) bytes per run")
            return report
        }

        // The client half runs in its own process, so its resident memory is the streaming client's alone
        // (not the stream file or the server).
        let reply = ScriptedReply.body(stream, contentType: "text/event-stream", writeSize: Self.chunkSize)
        let server = try LoopbackHTTPServer(keepsRequests: false) { _ in reply }
        defer { server.shutdown() }
        let measured = try SSEClientProcess.run(url: server.baseURL, passes: passes, runs: runs, expectedEvents: events)
        report.results.append(rate("loopback+libcurl", bytes: totalBytes, seconds: measured.seconds, baseline: newlineRate))
        report.results.append(eventRate("loopback+libcurl", events: events, seconds: measured.seconds))
        report.results.append(BenchResult(
            name: "text-stream", mode: "loopback+libcurl", metric: "peak_resident_megabytes", value: Double(measured.peakResidentBytes) / 1_048_576,
            unit: "MiB", bytes: Int(totalBytes), baseline: ("resident before the first request", Double(measured.residentBeforeStreaming) / 1_048_576)
        ))
        // Resident memory counts the pages of shared libraries (Swift runtime, Foundation, libcurl, TLS)
        // that the process touched; the anonymous part is the memory the client itself allocated.
        report.results.append(BenchResult(
            name: "text-stream", mode: "loopback+libcurl", metric: "peak_anonymous_resident_megabytes",
            value: Double(measured.peakAnonymousBytes) / 1_048_576, unit: "MiB", bytes: Int(totalBytes),
            baseline: ("anonymous before the first request", Double(measured.anonymousBeforeStreaming) / 1_048_576)
        ))
        report.notes.append("\(events) events, \(newlines) newlines and \(Int(totalBytes)) bytes per run")
        return report
    }

    private func rate(_ mode: String, bytes: Double, seconds: Double, baseline: Double) -> BenchResult {
        BenchResult(name: "text-stream", mode: mode, metric: "megabytes_per_second", value: bytes / 1e6 / seconds, unit: "MB/s",
                    bytes: Int(bytes), baseline: ("newline count", baseline))
    }

    private func eventRate(_ mode: String, events: Int, seconds: Double) -> BenchResult {
        BenchResult(name: "text-stream", mode: mode, metric: "events_per_second", value: Double(events) / seconds, unit: "1/s", bytes: nil, baseline: nil)
    }

    private func median(_ body: () throws -> Void) throws -> Double {
        var times: [Double] = []
        for _ in 0..<runs {
            let start = ContinuousClock.now
            try body()
            times.append((ContinuousClock.now - start).inSeconds)
        }
        times.sort()
        return times[times.count / 2]
    }

    private func countNewlines() -> Int {
        var count = 0
        stream.withUnsafeBufferPointer { buffer in
            for _ in 0..<passes {
                var offset = 0
                while offset < buffer.count {
                    let end = min(buffer.count, offset + Self.chunkSize)
                    for byte in buffer[offset..<end] where byte == 0x0A { count += 1 }
                    offset = end
                }
            }
        }
        return count
    }

    private func frameOnly() throws -> Int {
        var count = 0
        for _ in 0..<passes {
            var framer = SSEFramer()
            var offset = 0
            while offset < stream.count {
                let end = min(stream.count, offset + Self.chunkSize)
                // Each event is counted as it completes, as the client takes them (nothing collected).
                try framer.feed(stream[offset..<end]) { _, _, _, _, _ in count += 1 }
                offset = end
            }
        }
        return count
    }

    private func frameAndDecode() throws -> Int {
        var count = 0
        for _ in 0..<passes {
            var framer = SSEFramer()
            var decoder = ResponsesEventDecoder()
            var offset = 0
            while offset < stream.count {
                let end = min(stream.count, offset + Self.chunkSize)
                // Each event goes from the framer to the decoder as it completes, as the client reads a stream.
                try framer.feed(stream[offset..<end]) { (type, data, _, _, byteOffset) throws(AgentRuntimeError) in
                    if try decoder.decode(type: type, data: data, byteOffset: byteOffset) != nil { count += 1 }
                }
                offset = end
            }
        }
        return count
    }
}

/// Runs `codexctl bench sse-client` as a child process and reads its result.
enum SSEClientProcess {
    struct Measurement {
        let seconds: Double
        let peakResidentBytes: Int
        let residentBeforeStreaming: Int
        let peakAnonymousBytes: Int
        let anonymousBeforeStreaming: Int
    }

    static func run(url: URL, passes: Int, runs: Int, expectedEvents: Int) throws -> Measurement {
        let printed = try BenchChildProcess.run([
            "bench", "sse-client", "--url", url.absoluteString, "--passes", String(passes), "--runs", String(runs),
            "--expect-events", String(expectedEvents),
        ])
        let fields = printed.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard fields.count == 5 else { throw SSEBenchmark.Failure(description: "the streaming client printed no figures") }
        return Measurement(
            seconds: fields[0], peakResidentBytes: Int(fields[1]), residentBeforeStreaming: Int(fields[2]),
            peakAnonymousBytes: Int(fields[3]), anonymousBeforeStreaming: Int(fields[4])
        )
    }
}

/// `codexctl bench sse-client`: the client half of `bench sse`, run by it in a separate process.
enum SSEClientBenchCommand: CLICommand {
    static let name = "sse-client"
    static let summary = "The client half of 'bench sse' (run by it)."
    static let help = CommandHelp(
        command: "bench sse-client",
        overview: "The client half of 'bench sse' (run by it): stream a URL through the real transport and print the median seconds, the peak resident bytes, the resident bytes before the first request, the peak anonymous resident bytes and the anonymous resident bytes before the first request.",
        options: [
            .value("--url", "url", "The loopback server's base URL.", required: true), .value("--passes", "n", "Requests per run (default 16)."),
            .value("--runs", "n", "Runs; the median is printed (default 5)."), .value("--expect-events", "n", "Fail unless each run delivers this many events."),
        ]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        if printsHelp(arguments) { return Console.Status.success }
        guard let parsed = parse(arguments) else { return Console.Status.usage }
        guard let base = parsed.options["--url"].flatMap(URL.init(string:)),
              let passes = Int(parsed.options["--passes"] ?? "16"), let runs = Int(parsed.options["--runs"] ?? "5"), passes > 0, runs > 0 else {
            return Console.usageFailure("--url is required; --passes and --runs must be positive", help: help)
        }
        do {
            let client = ResponsesClient(
                configuration: .init(endpoint: try ResponsesEndpoint(baseURL: base, profile: .publicAPI), retryPolicy: .disabled),
                httpClient: DefaultHTTPClient(), authProvider: APIKeyAuthProvider(apiKey: "bench")
            )
            var times: [Double] = []
            let before = ProcessResources.residentBytes ?? 0
            var peak = before
            let anonymousBefore = ProcessResources.anonymousBytes ?? 0
            var peakAnonymous = anonymousBefore
            for _ in 0..<runs {
                var events = 0
                let start = ContinuousClock.now
                for _ in 0..<passes {
                    for try await _ in client.stream(ResponsesRequest(model: "bench")) {
                        events += 1
                        if events % 2_000 == 0 {
                            peak = max(peak, ProcessResources.residentBytes ?? 0)
                            peakAnonymous = max(peakAnonymous, ProcessResources.anonymousBytes ?? 0)
                        }
                    }
                }
                times.append((ContinuousClock.now - start).inSeconds)
                if let expected = parsed.options["--expect-events"].flatMap(Int.init), expected != events {
                    Console.error("Error: delivered \(events) events, expected \(expected)\n")
                    return Console.Status.failure
                }
            }
            times.sort()
            peak = max(peak, ProcessResources.peakResidentBytes ?? 0)
            Console.line("\(times[times.count / 2]) \(peak) \(before) \(peakAnonymous) \(anonymousBefore)")
            return Console.Status.success
        } catch {
            CLIFailure(error).report(json: parsed.has("--json"))
            return Console.Status.failure
        }
    }
}
