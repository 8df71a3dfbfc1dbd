import CodexCore
import CodexLoopback
import CodexRuntime
import CodexStorageSQLite
import CodexTransport
import Foundation

extension RuntimeBenchmark {
    /// The events of the short reply every measured turn gets: created, two deltas, the message, completed.
    static let turnReplyEvents = [
        #"{"type":"response.created","sequence_number":0,"response":{"id":"resp_b","status":"in_progress"}}"#,
        #"{"type":"response.output_text.delta","sequence_number":1,"item_id":"m","output_index":0,"content_index":0,"delta":"Hello "}"#,
        #"{"type":"response.output_text.delta","sequence_number":2,"item_id":"m","output_index":0,"content_index":0,"delta":"there."}"#,
        #"{"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":{"type":"message","id":"m","role":"assistant","status":"completed","phase":"final_answer","content":[{"type":"output_text","text":"Hello there."}]}}"#,
        #"{"type":"response.completed","sequence_number":4,"response":{"id":"resp_b","status":"completed","usage":{"input_tokens":9,"output_tokens":2,"total_tokens":11}}}"#,
    ]

    /// The short reply every measured turn gets.
    static let turnReply: ScriptedReply = .sse(turnReplyEvents.map { "data: \($0)\n\n" })

    /// What a whole turn costs the host: a one-pass turn with a short reply against an instantly answering
    /// loopback server, persisted in SQLite, next to the same HTTP exchange alone (the same client, no
    /// runtime, no store, no decoding) in the same run. Each turn runs on a thread of its own, created
    /// before the clock starts, so every turn replays the same (empty) history.
    func measureWholeTurns(into report: inout BenchReport, turns: Int = 500) async throws {
        let server = try LoopbackHTTPServer(keepsRequests: false) { _ in Self.turnReply }
        defer { server.shutdown() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-bench-turn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let http = CurlHTTPClient()
        var configuration = CodexResponsesBackendConfiguration()
        configuration.endpoint = try ResponsesEndpoint(baseURL: server.baseURL.appendingPathComponent("v1"), profile: .publicAPI)
        let backend = CodexResponsesBackend(configuration: configuration, httpClient: http, authProvider: APIKeyAuthProvider(apiKey: "sk-bench"))
        let runtime = try AgentRuntime(configuration: .init(
            backend: backend, stateStore: try SQLiteRuntimeStateStore(path: directory.appendingPathComponent("state.sqlite").path)
        ))
        let request = HTTPRequest(
            method: "POST", url: server.baseURL.appendingPathComponent("v1/responses"),
            headers: ["Content-Type": "application/json", "Accept": "text/event-stream"], body: Array(#"{"model":"bench","stream":true}"#.utf8)
        )
        let clock = ContinuousClock()
        var turnTimes: [Double] = []
        var exchangeTimes: [Double] = []
        for index in 0..<(turns + turns / 10) {
            let thread = try await runtime.createThread()
            var started = clock.now
            let reply = try await runtime.send(Request(text: "Say hello"), in: thread.id)
            let turn = (clock.now - started).inSeconds
            guard reply == "Hello there." else { throw AgentRuntimeError(code: .invalidRequest, message: "an unexpected reply") }
            started = clock.now
            let body = try await http.send(request).body.collect(upTo: 64 * 1024)
            let exchange = (clock.now - started).inSeconds
            guard !body.isEmpty else { throw AgentRuntimeError(code: .invalidRequest, message: "an empty exchange") }
            if index >= turns / 10 {  // the first tenth warms up
                turnTimes.append(turn)
                exchangeTimes.append(exchange)
            }
        }
        let turnsSorted = turnTimes.sorted()
        let exchangesSorted = exchangeTimes.sorted()
        func percentile(_ sorted: [Double], _ p: Int) -> Double { sorted[min(sorted.count - 1, sorted.count * p / 100)] * 1e6 }
        report.results.append(BenchResult(
            name: "whole turn", mode: "one pass, short reply, SQLite, p50", metric: "latency", value: percentile(turnsSorted, 50), unit: "µs",
            baseline: ("the same HTTP exchange alone, p50", percentile(exchangesSorted, 50))
        ))
        report.results.append(BenchResult(
            name: "whole turn", mode: "one pass, short reply, SQLite, p99", metric: "latency", value: percentile(turnsSorted, 99), unit: "µs",
            baseline: ("the same HTTP exchange alone, p99", percentile(exchangesSorted, 99))
        ))
        report.results.append(BenchResult(
            name: "whole turn", mode: "the SDK's own share (runtime, store, decoding), p50 of the differences", metric: "latency",
            value: Self.median(zip(turnTimes, exchangeTimes).map { $0 - $1 }) * 1e6, unit: "µs"
        ))
    }
}
