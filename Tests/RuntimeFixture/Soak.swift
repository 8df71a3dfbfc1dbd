import CodexCore
import CodexLoopback
import CodexRuntime
import CodexSchema
import CodexStorageSQLite
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization

/// `RuntimeFixture soak --db PATH --turns N [--seed S] [--turns-per-thread K] [--sample-every M]
/// [--client default|urlsession|curl] [--faults a,b] [--trace]`: N persistent turns through the runtime, the built-in backend, the
/// real transport, a loopback model service and a SQLite store, one seeded fault per turn (`SoakFault`).
/// After every turn it checks what the host saw and what the store recorded; after every thread (K turns)
/// it checks the thread's whole history. `--faults` limits the draw to the named faults. Every M turns it samples RSS and open descriptors. Prints one
/// JSON report and exits 1 when anything was inconsistent.
enum Soak {
    /// What the loopback service is told to do, and what it saw that it should not have.
    struct ServiceState: Sendable {
        var pending: [SoakExchange] = []
        var violations: [String] = []
    }

    struct Options {
        var path: String
        var turns: Int
        var seed: UInt64
        var turnsPerThread: Int
        var sampleEvery: Int
        var client: String
        var trace: Bool
        var faults: [SoakFault]

        init(_ option: (String) -> String?) throws {
            guard let path = option("--db"), let turns = option("--turns").flatMap(Int.init), turns > 0 else {
                throw AgentRuntimeError(code: .invalidRequest, message: "usage: soak --db PATH --turns N [--seed S] [--turns-per-thread K] [--sample-every M] [--client default|urlsession|curl] [--faults a,b] [--trace]")
            }
            self.path = path
            self.turns = turns
            seed = option("--seed").flatMap(UInt64.init) ?? 1
            turnsPerThread = max(1, option("--turns-per-thread").flatMap(Int.init) ?? 25)
            sampleEvery = max(1, option("--sample-every").flatMap(Int.init) ?? 250)
            client = option("--client") ?? "default"
            trace = CommandLine.arguments.contains("--trace")
            faults = option("--faults").map { $0.split(separator: ",").compactMap { SoakFault(rawValue: String($0)) } } ?? SoakFault.allCases
            if faults.isEmpty { faults = SoakFault.allCases }
        }
    }

    static func run(_ option: (String) -> String?) async throws {
        let options = try Options(option)
        let service = SoakService()
        let server = try LoopbackHTTPServer(keepsRequests: false) { request in
            answer(request, service)
        }
        defer { server.shutdown() }
        let store = try SQLiteRuntimeStateStore(path: options.path)
        let runtime = try AgentRuntime(configuration: .init(
            backend: try backend(server, client: options.client), stateStore: store,
            persona: AgentPersonaStack(layers: [.init(name: "soak", instructions: "Be brief.")]), tools: [lookupTool], readinessRetryPolicy: RetryPolicy(maximumAttempts: 3, initialDelay: .zero, maximumDelay: .zero, jitter: 0)
        ))

        var random = SplitMix64(seed: options.seed)
        var report = SoakReport(seed: options.seed, turns: options.turns)
        let started = ContinuousClock.now
        report.sample(turn: 0, seconds: 0, connections: server.openConnectionCount)
        var thread: AgentThread?
        var threadTurns: [(script: SoakTurnScript, turnID: AgentTurnID?)] = []
        for index in 0..<options.turns {
            if index % options.turnsPerThread == 0 {
                if let thread { await checkHistory(of: thread.id, threadTurns, runtime, &report) }
                thread = try await runtime.createThread(title: "Soak \(index / options.turnsPerThread)")
                threadTurns = []
            }
            guard let threadID = thread?.id else { break }
            let script = SoakTurnScript.make(SoakFault.draw(&random, from: options.faults), index: index)
            report.faults[script.fault.rawValue, default: 0] += 1
            if options.trace { FileHandle.standardError.write(Data("turn \(index) \(script.fault)\n".utf8)) }
            service.withLock { $0.pending = script.exchanges }
            let seen = await play(script, in: threadID, runtime, server)
            await settle(threadID, runtime, &report, index: index)
            let unserved = service.withLock { state in
                defer { state.pending = [] }
                return state.pending.count
            }
            if unserved > 0 { report.violation("turn \(index) (\(script.fault)): \(unserved) scripted replies never requested") }
            await check(script, seen, index: index, in: threadID, store, &report)
            threadTurns.append((script, seen.turnID))
            if (index + 1) % options.sampleEvery == 0 {
                report.sample(turn: index + 1, seconds: (ContinuousClock.now - started).seconds, connections: server.openConnectionCount)
            }
        }
        if let thread { await checkHistory(of: thread.id, threadTurns, runtime, &report) }
        for violation in service.withLock({ $0.violations }) { report.violation(violation) }

        report.integrity = (try? await store.integrityCheck())?.joined(separator: "; ") ?? "failed"
        let temporary = FileManager.default.temporaryDirectory.path
        report.temporaryFiles = ((try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []).count
        report.requests = server.requestCount
        report.connectionsAccepted = server.acceptedConnectionCount
        FileHandle.standardOutput.write(Data((report.json.compactString() + "\n").utf8))
        if !report.isClean { exit(1) }
    }

    /// The `lookup` tool: answers `value N` for a non-negative `n` and throws for a negative one.
    static let lookupTool = AgentTool(
        name: "lookup", description: "Looks a number up.", schema: .object(properties: ["n": .integer])
    ) { (input: LookupInput, context) in
        guard input.n >= 0 else { throw LookupRefused() }
        return context.success("value \(input.n)")
    }

    struct LookupInput: Decodable, Sendable { let n: Int }
    struct LookupRefused: Error {}

    static func backend(_ server: LoopbackHTTPServer, client: String) throws -> CodexResponsesBackend {
        var configuration = CodexResponsesBackendConfiguration(model: .gpt6Astra)
        configuration.endpoint = try ResponsesEndpoint(baseURL: server.baseURL.appendingPathComponent("api/codex"), profile: .chatGPT)
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 3, initialDelay: .zero, maximumDelay: .zero, jitter: 0)
        let auth = APIKeyAuthProvider(apiKey: "sk-soak")
        switch client {
        case "urlsession": return CodexResponsesBackend(configuration: configuration, httpClient: URLSessionHTTPClient(), authProvider: auth)
        case "curl": return CodexResponsesBackend(configuration: configuration, httpClient: CurlHTTPClient(), authProvider: auth)
        default: return CodexResponsesBackend(configuration: configuration, authProvider: auth)
        }
    }

    /// The service: the next scripted exchange, after checking the request carries what it must.
    static func answer(_ request: RecordedRequest, _ service: SoakService) -> ScriptedReply {
        service.withLock { state in
            guard request.method == "POST", request.path.hasSuffix("/responses") else {
                state.violations.append("unexpected request \(request.method) \(request.path)")
                return .json(#"{"error":{"message":"not here"}}"#, status: 404)
            }
            guard !state.pending.isEmpty else {
                state.violations.append("a model request beyond the turn's script")
                return .json(#"{"error":{"type":"server_error","message":"unscripted"}}"#, status: 400)
            }
            let exchange = state.pending.removeFirst()
            if let needle = exchange.mustContain, !contains(request.body, needle) {
                state.violations.append("a model request without '\(needle)'")
            }
            return exchange.reply
        }
    }

    private static func contains(_ body: [UInt8], _ needle: String) -> Bool {
        let pattern = Array(needle.utf8)
        guard !pattern.isEmpty, body.count >= pattern.count else { return pattern.isEmpty }
        for start in 0...(body.count - pattern.count) where body[start] == pattern[0] {
            if body[start..<(start + pattern.count)].elementsEqual(pattern) { return true }
        }
        return false
    }
}

/// The loopback service's shared state.
final class SoakService: Sendable {
    private let state = Mutex(Soak.ServiceState())

    func withLock<Result: Sendable>(_ body: (inout sending Soak.ServiceState) -> sending Result) -> Result {
        state.withLock { body(&$0) }
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
