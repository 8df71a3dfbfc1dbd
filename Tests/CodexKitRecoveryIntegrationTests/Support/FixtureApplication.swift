// A host application written against CodexKit's public API only (no `@testable` anywhere in this
// target): its output type, its model policies, a wrapper backend, its durable job store and the
// scripted provider it talks to.
import CodexCore
import CodexRecovery
import CodexRuntime
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization

/// The host's structured result.
struct NewsDigest: AgentStructuredOutput, Equatable {
    let headline: String
    static let responseFormat = AgentStructuredOutputFormat(name: "news_digest", schema: .object(properties: ["headline": .string()]))
}

/// The host's model policy: a model per purpose, swappable at run time; counts its calls.
final class PurposeSelector: CodexModelSelecting {
    private let state: Mutex<(models: [String: CodexModelConfiguration], calls: Int)>

    init(_ models: [String: CodexModelConfiguration]) { state = Mutex((models, 0)) }

    var calls: Int { state.withLock { $0.calls } }

    func use(_ model: CodexModelConfiguration, for purpose: String) { state.withLock { $0.models[purpose] = model } }

    func selectModel(in context: CodexModelSelectionContext) async throws -> CodexModelSelection {
        let model = state.withLock { state -> CodexModelConfiguration? in
            state.calls += 1
            return context.purpose.flatMap { state.models[$0] }
        }
        guard let model else { throw AgentRuntimeError(code: .modelUnavailable, message: "no model for this purpose") }
        return CodexModelSelection(configuration: model, policyID: "purpose")
    }
}

/// A policy that refuses every request (a host whose catalog or entitlement is gone).
struct RejectingSelector: CodexModelSelecting {
    func selectModel(in context: CodexModelSelectionContext) async throws -> CodexModelSelection {
        throw AgentRuntimeError(code: .modelUnavailable, message: "nothing is selectable")
    }
}

/// The host's wrapper backend: delegates every capability of the built-in backend, including the
/// SDK-owned recovery adapter, and prepares the model with the host's policy.
struct FixtureBackend: AgentBackendStructuredRecoverySupporting, AgentBackendRequestPreparing, AgentBackendModelDiscovering,
    AgentBackendRateLimitReporting, AgentBackendAuthenticating {
    let base: CodexResponsesBackend
    let policy: any CodexModelSelecting

    var defaultModel: CodexModel? { base.defaultModel }
    var structuredRecoveryAdapter: AgentStructuredRecoveryAdapter { base.structuredRecoveryAdapter }
    func startTurn(_ request: AgentBackendTurnRequest) async throws -> AgentTurnStream { try await base.startTurn(request) }
    func listModels(policy: CodexModelRefreshPolicy) async throws -> CodexModelCatalogSnapshot { try await base.listModels(policy: policy) }
    func rateLimits() async -> [AgentRateLimitSnapshot] { await base.rateLimits() }
    func adoptAuthProvider(_ provider: any AuthProvider) throws { try base.adoptAuthProvider(provider) }
    func prepareModelSelection(in context: CodexModelSelectionContext) async throws -> CodexModelSelection? {
        try await policy.selectModel(in: context)
    }
}

/// The host's durable job store: one JSON file (job key → input revision, handle, committed value,
/// commit count, acknowledgement), written atomically. Commits are idempotent by job and revision.
final class HostJobStore: Sendable {
    struct Job: Codable, Equatable {
        var revision: String
        var handle: AgentStructuredRecoveryHandle?
        var committedHeadline: String?
        var committedRevision: String?
        var commitCount = 0
        var acknowledged = false
    }

    let url: URL
    private let lock = Mutex(())

    init(url: URL) { self.url = url }

    func jobs() throws -> [String: Job] {
        guard let data = try? Data(contentsOf: url) else { return [:] }
        return try JSONDecoder().decode([String: Job].self, from: data)
    }

    func job(_ key: String) throws -> Job? { try jobs()[key] }

    /// One host transaction over the whole store.
    func update(_ key: String, revision: String, _ change: (inout Job) throws -> Void) throws {
        try lock.withLock { _ in
            var all = try jobs()
            var job = all[key] ?? Job(revision: revision)
            try change(&job)
            all[key] = job
            try JSONEncoder().encode(all).write(to: url, options: .atomic)
        }
    }

    /// Commits `digest` for the job's revision unless it is already committed; `false` when it was.
    @discardableResult
    func commit(_ key: String, revision: String, _ digest: NewsDigest) throws -> Bool {
        var applied = false
        try update(key, revision: revision) { job in
            guard job.revision == revision, job.committedRevision != revision else { return }
            job.committedHeadline = digest.headline
            job.committedRevision = revision
            job.commitCount += 1
            applied = true
        }
        return applied
    }
}

/// The scripted provider: replies per job (the job is found from the prompt in the body), then
/// completes with the job's digest; records every generation request with its job.
final class FixtureTransport: Sendable {
    enum Step: Sendable {
        case complete
        case status(Int, retryAfter: Int?)
        case hold
    }

    /// Each job's remaining steps.
    private final class Scripts: Sendable {
        private let steps: Mutex<[String: [Step]]>

        init(_ steps: [String: [Step]]) { self.steps = Mutex(steps) }

        func next(for job: String) -> Step {
            steps.withLock { scripts in
                guard var steps = scripts[job], !steps.isEmpty else { return .complete }
                let step = steps.removeFirst()
                scripts[job] = steps
                return step
            }
        }
    }

    let server: LoopbackHTTPServer

    init(_ scripts: [String: [Step]] = [:]) throws {
        let remaining = Scripts(scripts)
        server = try LoopbackHTTPServer { request in
            let job = Self.job(in: String(decoding: request.body, as: UTF8.self)) ?? "unknown"
            return Self.reply(remaining.next(for: job), job: job)
        }
    }

    deinit { server.shutdown() }

    /// The prompt a job's request carries.
    static func prompt(_ job: String) -> String { "Summarise the news for \(job)." }

    static func headline(_ job: String) -> String { "Calm markets (\(job))." }

    private static func job(in body: String) -> String? {
        guard let range = body.range(of: "Summarise the news for ") else { return nil }
        return String(body[range.upperBound...].prefix { $0 != "." })
    }

    private static func reply(_ step: Step, job: String) -> ScriptedReply {
        switch step {
        case .complete:
            let payload = #"{\"headline\":\"\#(headline(job))\"}"#
            let events = [
                #"{"type":"response.created","sequence_number":0,"response":{"id":"resp_\#(job)","status":"in_progress"}}"#,
                #"{"type":"response.output_item.done","sequence_number":1,"output_index":0,"item":{"type":"message","id":"msg_\#(job)","role":"assistant","status":"completed","content":[{"type":"output_text","text":"\#(payload)"}]}}"#,
                #"{"type":"response.completed","sequence_number":2,"response":{"id":"resp_\#(job)","status":"completed"}}"#,
            ]
            return .sse(events.map { "data: \($0)\n\n" })
        case .status(let status, let retryAfter):
            return .json(#"{"error":{"message":"busy","type":"server_error"}}"#, status: status,
                         headers: retryAfter.map { [HTTPHeaderField(name: "Retry-After", value: String($0))] } ?? [])
        case .hold:
            return ScriptedReply(headers: [.init(name: "Content-Type", value: "text/event-stream")], parts: [.hold], framing: .chunked)
        }
    }

    /// The generation requests sent for `job`, in order.
    func requests(for job: String) -> [RecordedRequest] {
        server.requests.filter { $0.path.hasSuffix("/responses") && String(decoding: $0.body, as: UTF8.self).contains(Self.prompt(job)) }
    }
}

/// One host installation: a recovery store directory, the host's job store and the provider; each
/// `runtime(...)` is a fresh process's runtime over the same files.
final class FixtureApplication: Sendable {
    let directory: URL
    let recoveryStore: AgentStructuredRecoveryStore
    let host: HostJobStore
    let transport: FixtureTransport

    init(_ scripts: [String: [FixtureTransport.Step]] = [:]) throws {
        directory = try temporaryDirectory("recovery-integration")
        recoveryStore = try AgentStructuredRecoveryStore(directory: directory.appendingPathComponent("recovery"))
        host = HostJobStore(url: directory.appendingPathComponent("host.json"))
        transport = try FixtureTransport(scripts)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// A runtime as the host builds it: the built-in backend inside the host's wrapper, credentials on
    /// the runtime.
    func runtime(policy: any CodexModelSelecting, clock: any Clock<Duration> = ContinuousClock(), wallClock: any AgentWallClock = SystemWallClock()) throws -> AgentRuntime {
        var configuration = CodexResponsesBackendConfiguration(model: .gpt6Sol)
        configuration.endpoint = try ResponsesEndpoint(baseURL: transport.server.baseURL.appendingPathComponent("v1"), profile: .publicAPI)
        let base = CodexResponsesBackend(configuration: configuration, clock: clock, wallClock: wallClock)
        return try AgentRuntime(configuration: .init(
            authProvider: APIKeyAuthProvider(apiKey: "sk-integration"), backend: FixtureBackend(base: base, policy: policy),
            stateStore: InMemoryRuntimeStateStore(), wallClock: wallClock, clock: clock
        ))
    }

    /// Steps 1–2 of the handoff: prepare, then persist the handle in the host's job transaction.
    func prepare(_ job: String, revision: String = "r1", on runtime: AgentRuntime, maximumAttempts: Int = 3) async throws -> AgentStructuredRecoveryHandle {
        var request = Request(text: FixtureTransport.prompt(job), executionMode: .ephemeral)
        request.selectionPurpose = "news"
        let thread = try await runtime.createThread(title: job)
        let handle = try await runtime.prepareStructuredRecovery(
            request, in: thread.id, response: NewsDigest.self, store: recoveryStore, maximumAttempts: maximumAttempts,
            retryPolicy: AgentRecoveryRetryPolicy(initialBackoff: 0, maximumBackoff: 0), hostJobID: job, inputRevision: revision
        )
        try host.update(job, revision: revision) { $0.handle = handle }
        return handle
    }

    /// Steps 3–5: send (or reopen), commit idempotently by job and revision, acknowledge after the commit.
    func finish(_ job: String, revision: String = "r1", handle: AgentStructuredRecoveryHandle, on runtime: AgentRuntime) async throws -> NewsDigest {
        let digest = try await runtime.sendRecovering(handle, response: NewsDigest.self, store: recoveryStore) { _ in true }
        try host.commit(job, revision: revision, digest)
        try await runtime.acknowledgeStructuredRecovery(handle, store: recoveryStore)
        try host.update(job, revision: revision) { $0.acknowledged = true }
        return digest
    }
}
