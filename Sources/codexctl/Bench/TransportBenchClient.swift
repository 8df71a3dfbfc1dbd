import CodexCore
import CodexLoopback
import CodexTransport
import Foundation

/// `codexctl bench transport-client`: the measuring half of `bench transport`, run by it in a process of
/// its own per client, so resident memory and descriptors are one client's alone.
enum TransportBenchClientCommand: CLICommand {
    static let name = "transport-client"
    static let summary = "The measuring half of 'bench transport' (run by it)."
    static let help = CommandHelp(
        command: "bench transport-client",
        overview: """
        The measuring half of 'bench transport' (run by it): start a loopback server in this process, run the \
        named scenarios with one client and print one JSON object of figures.
        """,
        options: [
            .value("--client", "name", "raw (a bare socket, the baseline), curl (CurlHTTPClient) or urlsession (URLSessionHTTPClient).", required: true)
                .suggesting(["raw", "curl", "urlsession"]),
            .value("--scenario", "list", "Comma-separated: stream, requests, turns, paused (turns and paused need curl or urlsession).", required: true),
            .value("--runs", "n", "Streamed runs; the median is reported (default 5)."),
            .value("--requests", "n", "Small requests per mode (default 2000)."),
            .value("--stream-mib", "n", "The size of the streamed response in MiB (default 256)."),
        ]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        if printsHelp(arguments) { return Console.Status.success }
        guard let parsed = parse(arguments) else { return Console.Status.usage }
        guard let kind = parsed.options["--client"].flatMap(TransportBenchClient.Kind.init(rawValue:)),
              let runs = Int(parsed.options["--runs"] ?? "5"), runs > 0,
              let requests = Int(parsed.options["--requests"] ?? "2000"), requests > 0,
              let streamMiB = Int(parsed.options["--stream-mib"] ?? "256"), streamMiB > 0 else {
            return Console.usageFailure("--client must be raw, curl or urlsession; --runs, --requests and --stream-mib positive integers", help: help)
        }
        // A test hook: this client's run fails as a defect of the platform's client would, so a test can
        // prove that `bench transport` reports its figures missing and goes on.
        if ProcessInfo.processInfo.environment["CODEXCTL_BENCH_FAIL_CLIENT"] == kind.rawValue {
            Console.error("Error: the \(kind.rawValue) client's run was made to fail (CODEXCTL_BENCH_FAIL_CLIENT)")
            return Console.Status.failure
        }
        let scenarios = (parsed.options["--scenario"] ?? "").split(separator: ",").map(String.init)
        do {
            let bench = TransportBenchClient(kind: kind, runs: runs, requests: requests, streamMiB: streamMiB)
            var figures: [String: Double] = [:]
            for scenario in scenarios {
                switch scenario {
                case "stream": figures.merge(try await bench.stream()) { $1 }
                case "requests": figures.merge(try await bench.smallRequests()) { $1 }
                case "paused": figures.merge(try await bench.pausedConsumer()) { $1 }
                case "turns": figures.merge(try await bench.turns()) { $1 }
                case "tls": figures.merge(try await bench.tlsRequests()) { $1 }
                default: return Console.usageFailure("unknown scenario '\(Console.display(scenario))'", help: help)
                }
            }
            let data = try JSONSerialization.data(withJSONObject: figures, options: [.sortedKeys])
            Console.exactLine(String(decoding: data, as: UTF8.self))
            return Console.Status.success
        } catch {
            // The scenarios' own failures say what went wrong in the bench's words (no secrets in them).
            let failure = (error as? TransportBenchClient.Failure).map { CLIFailure(code: "bench_failed", message: $0.description) } ?? CLIFailure(error)
            failure.report(json: false)
            return Console.Status.failure
        }
    }
}

/// The transport scenarios, each against a loopback server in this process.
struct TransportBenchClient {
    /// The client under measurement.
    enum Kind: String {
        case raw, curl, urlsession
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let kind: Kind
    let runs: Int
    let requests: Int
    /// The streamed response's size in MiB: sent as 16 sends of 64 KiB per MiB.
    let streamMiB: Int

    /// One send of a streamed response.
    static let streamChunk = [UInt8](repeating: 0x61, count: 64 * 1024)
    private var streamBytes: Int { streamMiB * 1_048_576 }
    /// The most bytes the paused scenario lets a sender push before it stops watching.
    static let pausedSendCap = 512 * 1024 * 1024

    private func httpClient() -> any HTTPClient {
        kind == .urlsession ? URLSessionHTTPClient() : CurlHTTPClient()
    }

    /// Median MB/s of one `streamMiB` response, fully read.
    func stream() async throws -> [String: Double] {
        let reply = ScriptedReply(headers: [HTTPHeaderField(name: "Content-Type", value: "application/octet-stream")],
                                  parts: [.repeating(Self.streamChunk, times: streamMiB * 16)])
        let server = try LoopbackHTTPServer(keepsRequests: false) { _ in reply }
        defer { server.shutdown() }
        let http = httpClient()
        var seconds: [Double] = []
        for _ in 0...runs {  // the first run warms up and is not counted
            let started = ContinuousClock.now
            var received = 0
            if kind == .raw {
                let socket = try RawSocketClient(port: server.port)
                try socket.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                // The count includes the response head (well under 4 KiB); the body is the rest.
                let total = try socket.drain()
                received = (streamBytes..<streamBytes + 4096).contains(total) ? streamBytes : total
            } else {
                let response = try await http.send(HTTPRequest(method: "GET", url: server.baseURL))
                for try await chunk in response.body { received += chunk.count }
            }
            guard received == streamBytes else { throw Failure(description: "streamed \(received) bytes, expected \(streamBytes)") }
            seconds.append((ContinuousClock.now - started).inSeconds)
        }
        var figures = ["stream_mb_per_s": megabytesPerSecond(seconds)]
        if kind == .curl {
            // The floor under the libcurl client: the same GET through a bare libcurl easy handle on
            // this thread, its bytes counted and dropped (no engine thread, no hand-off, no copy).
            let bare = try CurlBaseline(url: server.baseURL.absoluteString, body: nil, keepsBody: false)
            var bareSeconds: [Double] = []
            for _ in 0...runs {
                let started = ContinuousClock.now
                let reply = try bare.exchange()
                guard reply.status == 200, reply.count == streamBytes else {
                    throw Failure(description: "bare libcurl streamed \(reply.count) bytes, status \(reply.status)")
                }
                bareSeconds.append((ContinuousClock.now - started).inSeconds)
            }
            figures["bare_curl_stream_mb_per_s"] = megabytesPerSecond(bareSeconds)
        }
        return figures
    }

    /// The streamed size over the median of `seconds`, the first (warm-up) run left out.
    private func megabytesPerSecond(_ seconds: [Double]) -> Double {
        let counted = seconds.dropFirst().sorted()
        return Double(streamBytes) / 1e6 / counted[counted.count / 2]
    }

    /// The small JSON reply of the small-request scenarios (plain and TLS).
    static let smallAnswer = #"{"id":"resp_bench","status":"completed","output":[]}"#
    /// The 228-byte JSON body of the small-request scenarios.
    static let smallRequestBody = Array(#"{"model":"bench","input":"\#(String(repeating: "x", count: 200))"}"#.utf8)

    /// Sequential small POSTs answered with a small JSON body: requests per second, the 99th-percentile
    /// exchange in microseconds, and the connections the server accepted. The raw client also measures a
    /// fresh connection per exchange.
    func smallRequests() async throws -> [String: Double] {
        let answer = Self.smallAnswer
        let server = try LoopbackHTTPServer(keepsRequests: false) { _ in .json(answer) }
        defer { server.shutdown() }
        let body = Self.smallRequestBody
        var figures: [String: Double] = [:]
        if kind == .raw {
            let head = "POST /responses HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n"
            // The request's bytes are made once: a bare client sends the same bytes each time.
            let keptRequest = Array((head + "\r\n").utf8) + body
            let freshRequest = Array((head + "Connection: close\r\n\r\n").utf8) + body
            let kept = try RawSocketClient(port: server.port)
            let keptLatencies = try exchanges { () throws(RawSocketClient.Failure) in
                try kept.send(bytes: keptRequest)
                _ = try kept.receiveResponse()
            }
            figures.merge(summary(keptLatencies, prefix: "requests")) { $1 }
            let freshLatencies = try exchanges { () throws(RawSocketClient.Failure) in
                let fresh = try RawSocketClient(port: server.port)
                try fresh.send(bytes: freshRequest)
                _ = try fresh.receiveResponse()
            }
            figures.merge(summary(freshLatencies, prefix: "fresh_requests")) { $1 }
        } else {
            let http = httpClient()
            let request = HTTPRequest(method: "POST", url: server.baseURL.appendingPathComponent("responses"),
                                      headers: ["Content-Type": "application/json"], body: body)
            var latencies: [Double] = []
            for _ in 0..<(requests + requests / 10) {
                let started = ContinuousClock.now
                let reply = try await http.send(request).body.collect(upTo: 64 * 1024)
                guard reply.count == answer.utf8.count else { throw Failure(description: "a reply of \(reply.count) bytes") }
                latencies.append((ContinuousClock.now - started).inSeconds)
            }
            figures.merge(summary(Array(latencies.dropFirst(requests / 10)), prefix: "requests")) { $1 }
            figures["connections"] = Double(server.acceptedConnectionCount)
            // The baseline: a new client (and so a new connection) for every request, as a client that
            // kept nothing between requests would.
            var fresh: [Double] = []
            for _ in 0..<max(1, requests / 4) {
                let started = ContinuousClock.now
                let reply = try await httpClient().send(request).body.collect(upTo: 64 * 1024)
                guard reply.count == answer.utf8.count else { throw Failure(description: "a reply of \(reply.count) bytes") }
                fresh.append((ContinuousClock.now - started).inSeconds)
            }
            figures.merge(summary(fresh, prefix: "fresh_client_requests")) { $1 }
            if kind == .curl {
                // The floor under the libcurl client: the same exchanges through a bare libcurl easy
                // handle on this thread (no engine thread, no hand-off, no Swift values per request).
                let bare = try CurlBaseline(
                    url: server.baseURL.appendingPathComponent("responses").absoluteString, headers: ["Content-Type: application/json"], body: body
                )
                let bareLatencies = try exchanges { () throws in
                    let reply = try bare.exchange()
                    guard reply.status == 200, reply.body.count == answer.utf8.count else {
                        throw Failure(description: "a bare libcurl reply of \(reply.body.count) bytes, status \(reply.status)")
                    }
                }
                figures.merge(summary(bareLatencies, prefix: "bare_curl_requests")) { $1 }
            }
            return figures
        }
        figures["connections"] = Double(server.acceptedConnectionCount)
        return figures
    }

    /// Streamed turns: a POST answered with a short Responses SSE stream (created, two deltas, the
    /// message, completed) read to its end. Turns per second and the median time to the first body
    /// byte, on one shared client and with a new client per turn (the baseline).
    func turns() async throws -> [String: Double] {
        guard kind != .raw else { return [:] }
        let events = [
            #"{"type":"response.created","sequence_number":0,"response":{"id":"resp_b","status":"in_progress"}}"#,
            #"{"type":"response.output_text.delta","sequence_number":1,"item_id":"m","output_index":0,"content_index":0,"delta":"Hello "}"#,
            #"{"type":"response.output_text.delta","sequence_number":2,"item_id":"m","output_index":0,"content_index":0,"delta":"there."}"#,
            #"{"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":{"type":"message","id":"m","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hello there."}]}}"#,
            #"{"type":"response.completed","sequence_number":4,"response":{"id":"resp_b","status":"completed"}}"#,
        ].map { "data: \($0)\n\n" }
        let reply = ScriptedReply.sse(events)
        let server = try LoopbackHTTPServer(keepsRequests: false) { _ in reply }
        defer { server.shutdown() }
        let request = HTTPRequest(method: "POST", url: server.baseURL.appendingPathComponent("responses"),
                                  headers: ["Content-Type": "application/json", "Accept": "text/event-stream"], body: Array(#"{"model":"bench"}"#.utf8))
        func turn(on http: any HTTPClient) async throws -> (total: Double, firstByte: Double) {
            let started = ContinuousClock.now
            var iterator = try await http.send(request).body.makeAsyncIterator()
            var firstByte: Double?
            while let chunk = try await iterator.next() {
                if firstByte == nil, !chunk.isEmpty { firstByte = (ContinuousClock.now - started).inSeconds }
            }
            return ((ContinuousClock.now - started).inSeconds, firstByte ?? 0)
        }
        let shared = httpClient()
        var kept: [(total: Double, firstByte: Double)] = []
        for _ in 0..<(requests + requests / 10) { kept.append(try await turn(on: shared)) }
        kept.removeFirst(requests / 10)
        var fresh: [Double] = []
        for _ in 0..<max(1, requests / 4) { fresh.append(try await turn(on: httpClient()).total) }
        let firstBytes = kept.map(\.firstByte).sorted()
        return [
            "turns_per_s": Double(kept.count) / kept.map(\.total).reduce(0, +),
            "turns_first_byte_p50_us": firstBytes[firstBytes.count / 2] * 1e6,
            "fresh_client_turns_per_s": Double(fresh.count) / fresh.reduce(0, +),
        ]
    }

    /// Runs `requests` exchanges after a tenth as many uncounted warm-up ones; returns their durations.
    private func exchanges<Failure: Error>(_ exchange: () throws(Failure) -> Void) throws(Failure) -> [Double] {
        var latencies: [Double] = []
        for _ in 0..<(requests + requests / 10) {
            let started = ContinuousClock.now
            try exchange()
            latencies.append((ContinuousClock.now - started).inSeconds)
        }
        return Array(latencies.dropFirst(requests / 10))
    }

    private func summary(_ latencies: [Double], prefix: String) -> [String: Double] {
        let sorted = latencies.sorted()
        return [
            "\(prefix)_per_s": Double(latencies.count) / latencies.reduce(0, +),
            "\(prefix)_p99_us": sorted[min(sorted.count - 1, sorted.count * 99 / 100)] * 1e6,
        ]
    }

    /// An endless fast stream whose consumer reads one chunk and stops: how far the sender gets before it
    /// stalls (or the cap), and how much resident memory the client grew by meanwhile.
    func pausedConsumer() async throws -> [String: Double] {
        guard kind != .raw else { throw Failure(description: "the paused scenario needs curl or urlsession") }
        let server = try LoopbackHTTPServer(keepsRequests: false) { request in
            request.path == "/warm-up" ? .text("warm-up") : ScriptedReply(parts: [.repeating(Self.streamChunk, times: nil)], framing: .chunked)
        }
        defer { server.shutdown() }
        let http = httpClient()
        _ = try await http.send(HTTPRequest(method: "GET", url: server.baseURL.appendingPathComponent("warm-up"))).body.collect(upTo: 1024)
        let before = ProcessResources.residentBytes ?? 0
        let response = try await http.send(HTTPRequest(method: "GET", url: server.baseURL))
        var iterator = response.body.makeAsyncIterator()
        _ = try await iterator.next()
        let sent = await server.waitForSenderToStall(limit: Self.pausedSendCap)
        let paused = ProcessResources.residentBytes ?? 0
        response.body.cancel()
        return [
            "paused_sent_mib": Double(sent) / 1_048_576,
            "paused_rss_growth_mib": Double(max(0, paused - before)) / 1_048_576,
            "paused_sender_stalled": sent < Self.pausedSendCap ? 1 : 0,
        ]
    }
}
