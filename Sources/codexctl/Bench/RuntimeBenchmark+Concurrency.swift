import CodexCore
import CodexLoopback
import CodexRuntime
import CodexTransport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension RuntimeBenchmark {
    /// How many turns run at once in each round of the concurrency part.
    static let concurrencyLevels = [1, 10, 100, 1_000]

    /// A reply whose first delta arrives at once and whose rest waits until the benchmark releases it, so
    /// every turn of a round is open (streaming, holding its buffers and connection) at the same moment.
    static let heldTurnReply: ScriptedReply = {
        let events = (turnReplyEvents.map { "data: \($0)\n\n" })
        return ScriptedReply(
            headers: [HTTPHeaderField(name: "Content-Type", value: "text/event-stream")],
            parts: [.bytes(Array(events.prefix(2).joined().utf8)), .hold, .bytes(Array(events.dropFirst(2).joined().utf8))], framing: .chunked
        )
    }()

    /// How the SDK's cost grows with concurrent turns: for N turns at once on one runtime (ephemeral,
    /// streamed, against the loopback server through libcurl), the CPU per turn, the resident memory per
    /// open turn, events per second and the p99 time to the first event, each next to N bare HTTP
    /// exchanges of the same replies through the same client in the same round (the connections, the
    /// server's threads and libcurl are in both; the memory difference is the runtime's). Reports the
    /// descriptors left after each round (the client keeps up to 16 connections for reuse).
    func measureConcurrency(into report: inout BenchReport, levels: [Int] = Self.concurrencyLevels) async throws {
        Self.raiseDescriptorLimit()
        var cpuPerTurn: [Int: Double] = [:]
        // An unmeasured round first, so the first measured one does not carry the process's one-time costs
        // (threads, the connection cache, first allocations).
        for (index, count) in ([10] + levels).enumerated() {
            let measured = index > 0
            let server = try LoopbackHTTPServer(keepsRequests: false) { _ in Self.heldTurnReply }
            let http = CurlHTTPClient()
            var configuration = CodexResponsesBackendConfiguration()
            configuration.endpoint = try ResponsesEndpoint(baseURL: server.baseURL.appendingPathComponent("v1"), profile: .publicAPI)
            let backend = CodexResponsesBackend(configuration: configuration, httpClient: http, authProvider: APIKeyAuthProvider(apiKey: "sk-bench"))
            let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore()))
            let thread = try await runtime.createThread()
            let descriptorsBefore = ProcessResources.openDescriptorCount

            let bare = try await Self.round(count, server: server) { opened in
                let request = HTTPRequest(
                    method: "POST", url: server.baseURL.appendingPathComponent("v1/responses"),
                    headers: ["Content-Type": "application/json", "Accept": "text/event-stream"], body: Array(#"{"model":"bench","stream":true}"#.utf8)
                )
                var first = true
                var bytes = 0
                for try await chunk in try await http.send(request).body {
                    bytes += chunk.count
                    if first {
                        first = false
                        opened()
                    }
                }
                return bytes > 0 ? 2 : 0
            }
            let turns = try await Self.round(count, server: server) { opened in
                var deltas = 0
                for try await event in try await runtime.stream(Request(text: "Say hello", executionMode: .ephemeral), in: thread.id) {
                    if case .assistantMessageDelta = event {
                        deltas += 1
                        if deltas == 1 { opened() }
                    }
                }
                return deltas
            }
            guard turns.events == 2 * count, bare.events == 2 * count else {
                throw AgentRuntimeError(code: .invalidRequest, message: "a round lost events (\(turns.events) and \(bare.events) of \(2 * count))")
            }
            server.shutdown()
            guard measured else { continue }
            // Connections the client keeps for reuse are not a leak; anything beyond its cache is.
            let left = ProcessResources.openDescriptorCount - descriptorsBefore
            // Both ends are in this process: a round's CPU is the runtime's (or nothing, for the bare round),
            // libcurl's and the loopback server's. The bare round is the same exchanges without the runtime.
            let cpu = turns.cpuSeconds / Double(count)
            cpuPerTurn[count] = cpu
            report.results.append(BenchResult(
                name: "concurrent turns", mode: "N = \(count), CPU per turn (runtime, libcurl and the loopback server)", metric: "cpu", value: cpu * 1e6, unit: "µs",
                baseline: ("the same exchanges without the runtime", bare.cpuSeconds / Double(count) * 1e6)
            ))
            report.results.append(BenchResult(
                name: "concurrent turns", mode: "N = \(count), resident memory per open turn beyond a bare exchange", metric: "memory",
                value: Double(max(0, turns.openResidentBytes - bare.openResidentBytes)) / Double(count) / 1024, unit: "KiB"
            ))
            report.results.append(BenchResult(
                name: "concurrent turns", mode: "N = \(count), events per second", metric: "throughput", value: Double(turns.events) / turns.seconds, unit: "events/s",
                baseline: ("bare exchanges, chunks per second", Double(bare.events) / bare.seconds)
            ))
            report.results.append(BenchResult(
                name: "concurrent turns", mode: "N = \(count), p99 time to the first event", metric: "latency", value: turns.firstEventP99 * 1e6, unit: "µs",
                baseline: ("bare exchanges, p99 time to the first chunk", bare.firstEventP99 * 1e6)
            ))
            report.results.append(BenchResult(
                name: "concurrent turns", mode: "N = \(count), descriptors left after the round (the client keeps up to 16 connections)", metric: "count",
                value: Double(max(0, left)), unit: "descriptors"
            ))
        }
        if let one = cpuPerTurn[1], let most = levels.last.flatMap({ cpuPerTurn[$0] }), one > 0 {
            report.results.append(BenchResult(
                name: "concurrent turns", mode: "CPU per turn at N = \(levels.last ?? 0) next to N = 1", metric: "cpu", value: most * 1e6, unit: "µs",
                baseline: ("N = 1", one * 1e6)
            ))
        }
    }

    /// One round's figures.
    struct Round {
        var seconds: Double
        var cpuSeconds: Double
        var openResidentBytes: Int
        var firstEventP99: Double
        var events: Int
    }

    /// Runs `count` copies of `body` at once; when every one has called `opened()` (its first event
    /// arrived), measures the resident memory and releases the server's held replies; returns when all
    /// have ended.
    private static func round(
        _ count: Int, server: LoopbackHTTPServer, _ body: @escaping @Sendable (_ opened: @escaping @Sendable () -> Void) async throws -> Int
    ) async throws -> Round {
        let clock = ContinuousClock()
        let allOpen = Countdown(count)
        let samples = RoundSamples()
        let cpuBefore = processCPUSeconds()
        let started = clock.now
        let releaser = Task {
            await allOpen.wait()
            samples.openResident.withLock { $0 = ProcessResources.residentBytes ?? 0 }
            server.releaseHeld()
        }
        let events = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<count {
                group.addTask {
                    let begun = clock.now
                    return try await body {
                        samples.firstEvents.withLock { $0.append((clock.now - begun).inSeconds) }
                        allOpen.arrive()
                    }
                }
            }
            var total = 0
            for try await events in group { total += events }
            return total
        }
        await releaser.value
        let seconds = (clock.now - started).inSeconds
        let sorted = samples.firstEvents.withLock { $0 }.sorted()
        return Round(
            seconds: seconds, cpuSeconds: processCPUSeconds() - cpuBefore, openResidentBytes: samples.openResident.withLock { $0 },
            firstEventP99: sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, sorted.count * 99 / 100)], events: events
        )
    }

    /// User and system CPU time of this process so far.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// 1,000 turns hold 2,000 sockets (both ends are in this process): the soft descriptor limit is raised
    /// to the hard one.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// What the turns of one round record.
final class RoundSamples: Sendable {
    let firstEvents = Mutex<[Double]>([])
    let openResident = Mutex(0)
}

/// Counts arrivals; ``wait()`` returns once `count` have arrived.
final class Countdown: Sendable {
    private let state: Mutex<(remaining: Int, waiter: CheckedContinuation<Void, Never>?)>

    init(_ count: Int) { state = Mutex((count, nil)) }

    func arrive() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.remaining -= 1
            guard state.remaining == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.remaining <= 0 { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}
