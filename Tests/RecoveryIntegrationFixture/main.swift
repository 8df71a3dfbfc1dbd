// RecoveryIntegrationFixture: plays a host application for the recovery process tests. It keeps a small host
// store (host.json: job, revision, handle, committed value, commit count, acknowledged), runs the spec's
// handoff (prepare → persist handle → sendRecovering → host commit → acknowledge) against a Responses
// endpoint, and can die on purpose: `--exit-after receipt|commit` exits with 73 / 74 at those points,
// `--exit-after handle` exits with 75 once the handle is stored, `--exit-after authorization` with 76
// inside the host's authorization callback (after logging the attempt), and `--kill-at <operation>:<n>` SIGKILLs
// itself right after the n-th such file-system call of the store. `--api runtime` runs the same handoff
// through AgentRuntime (public API only) with a wrapper backend that delegates the recovery adapter and
// selects the model by the host's purpose; `--api engine` (the default) calls the recovery engine.
import CodexCore
import CodexRecovery
import CodexRuntime
import CodexSchema
import CodexTransport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

struct Verdict: AgentStructuredOutput {
    let ok: Bool
    let reason: String
    static let responseFormat = AgentStructuredOutputFormat(
        name: "verdict",
        rawSchema: [
            "type": "object", "properties": ["ok": ["type": "boolean"], "reason": ["type": "string"]],
            "required": ["ok", "reason"], "additionalProperties": false,
        ]
    )
}

/// The host's own durable state for one logical job.
struct HostState: Codable {
    var job: String
    var revision: String
    var handle: AgentStructuredRecoveryHandle?
    var committedReason: String?
    var committedRevision: String?
    var commitCount = 0
    var acknowledged = false
}

/// The host store: one JSON file replaced atomically (temporary file, fsync, rename, fsync directory).
struct HostStore {
    let url: URL

    func load(job: String, revision: String) throws -> HostState {
        guard let data = try? Data(contentsOf: url) else { return HostState(job: job, revision: revision) }
        return try JSONDecoder().decode(HostState.self, from: data)
    }

    /// The host transaction: writes the whole state durably.
    func save(_ state: HostState) throws {
        let data = try JSONEncoder().encode(state)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".host.\(getpid()).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FixtureError.hostStore }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == data.count, fsync(fd) == 0 else {
            close(fd)
            throw FixtureError.hostStore
        }
        close(fd)
        guard rename(temporary.path, url.path) == 0 else { throw FixtureError.hostStore }
        let directory = open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }
}

enum FixtureError: Error {
    case usage(String)
    case hostStore
    case staleRevision
}

/// The real file system, with an optional self-inflicted SIGKILL right after the n-th call of one kind.
final class KillingFileSystem: RecoveryFileSystem {
    private let real = PosixRecoveryFileSystem()
    private let target: (RecoveryFileOperation, Int)?
    private let counter = Counter()

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var counts: [RecoveryFileOperation: Int] = [:]
        func increment(_ operation: RecoveryFileOperation) -> Int {
            lock.lock()
            defer { lock.unlock() }
            counts[operation, default: 0] += 1
            return counts[operation, default: 0]
        }
    }

    init(target: (RecoveryFileOperation, Int)?) {
        self.target = target
    }

    private func after(_ operation: RecoveryFileOperation) {
        let count = counter.increment(operation)
        if let target, target.0 == operation, target.1 == count {
            kill(getpid(), SIGKILL)
        }
    }

    func openDirectory(path: String) throws(RecoverySystemCallError) -> Int32 { try real.openDirectory(path: path) }
    func openDirectory(in directory: Int32, name: String) throws(RecoverySystemCallError) -> Int32 { try real.openDirectory(in: directory, name: name) }
    func makeDirectory(in directory: Int32, name: String, mode: mode_t) throws(RecoverySystemCallError) {
        try real.makeDirectory(in: directory, name: name, mode: mode)
        after(.makeDirectory)
    }
    func openFile(in directory: Int32, name: String, flags: Int32, mode: mode_t) throws(RecoverySystemCallError) -> Int32 {
        try real.openFile(in: directory, name: name, flags: flags, mode: mode)
    }
    func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(RecoverySystemCallError) -> Int { try real.read(descriptor, into: buffer) }
    func write(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer) throws(RecoverySystemCallError) -> Int {
        let count = try real.write(descriptor, from: buffer)
        after(.write)
        return count
    }
    func sync(_ descriptor: Int32, directory: Bool) throws(RecoverySystemCallError) {
        try real.sync(descriptor, directory: directory)
        after(directory ? .syncDirectory : .syncFile)
    }
    func rename(in directory: Int32, from: String, to: String) throws(RecoverySystemCallError) {
        try real.rename(in: directory, from: from, to: to)
        after(.rename)
    }
    func unlink(in directory: Int32, name: String, directory isDirectory: Bool) throws(RecoverySystemCallError) {
        try real.unlink(in: directory, name: name, directory: isDirectory)
        after(.unlink)
    }
    func status(_ descriptor: Int32) throws(RecoverySystemCallError) -> stat { try real.status(descriptor) }
    func status(in directory: Int32, name: String) throws(RecoverySystemCallError) -> stat { try real.status(in: directory, name: name) }
    func lockExclusively(_ descriptor: Int32, wait: Bool) throws(RecoverySystemCallError) -> Bool { try real.lockExclusively(descriptor, wait: wait) }
    func unlock(_ descriptor: Int32) { real.unlock(descriptor) }
    func changeMode(_ descriptor: Int32, to mode: mode_t) throws(RecoverySystemCallError) { try real.changeMode(descriptor, to: mode) }
    func entries(of directory: Int32) throws(RecoverySystemCallError) -> [String] { try real.entries(of: directory) }
    func close(_ descriptor: Int32) { real.close(descriptor) }
}

/// A host's wrapper around the built-in backend: it delegates the SDK-owned recovery adapter and picks
/// the model by the request's purpose.
struct HostBackend: AgentBackendStructuredRecoverySupporting, AgentBackendRequestPreparing, AgentBackendAuthenticating {
    let base: CodexResponsesBackend

    func startTurn(_ request: AgentBackendTurnRequest) async throws -> AgentTurnStream { try await base.startTurn(request) }
    var structuredRecoveryAdapter: AgentStructuredRecoveryAdapter { base.structuredRecoveryAdapter }
    func adoptAuthProvider(_ provider: any AuthProvider) throws { try base.adoptAuthProvider(provider) }

    func prepareModelSelection(in context: CodexModelSelectionContext) async throws -> CodexModelSelection? {
        guard context.purpose == "shipping-decision" else { return nil }
        return CodexModelSelection(configuration: CodexModelConfiguration(model: .gpt6Astra, reasoningEffort: .low), policyID: "host-purpose")
    }
}

/// The three calls of the handoff, through the engine or through the runtime.
struct RecoveryFront {
    let prepare: @Sendable (_ job: String, _ revision: String) async throws -> AgentStructuredRecoveryHandle
    let send: @Sendable (AgentStructuredRecoveryHandle, @escaping @Sendable (AgentRecoveryAttempt) async throws -> Bool) async throws -> Verdict
    let acknowledge: @Sendable (AgentStructuredRecoveryHandle) async throws -> Void

    static let prompt = "Decide whether shipment 42 may leave today."
    static let retryPolicy = AgentRecoveryRetryPolicy(initialBackoff: 0, maximumBackoff: 0)

    static func engine(store: AgentStructuredRecoveryStore, endpoint: ResponsesEndpoint) -> RecoveryFront {
        let recovery = AgentStructuredRecovery(
            configuration: .init(endpoint: endpoint), httpClient: DefaultHTTPClient(), authProvider: APIKeyAuthProvider(apiKey: "sk-fixture-key")
        )
        return RecoveryFront(
            prepare: { job, revision in
                try await recovery.prepare(
                    Request(text: prompt, executionMode: .ephemeral), format: Verdict.responseFormat,
                    model: .init(model: "gpt-6-astra", reasoningEffort: .low), store: store,
                    options: .init(maximumAttempts: 3, retryPolicy: retryPolicy, hostJobID: job, inputRevision: revision)
                )
            },
            send: { handle, authorize in try await recovery.sendRecovering(handle, response: Verdict.self, store: store, authorizeAttempt: authorize) },
            acknowledge: { handle in try await recovery.acknowledge(handle, store: store) }
        )
    }

    static func runtime(store: AgentStructuredRecoveryStore, endpoint: ResponsesEndpoint) throws -> RecoveryFront {
        let backend = HostBackend(base: CodexResponsesBackend(configuration: .init(model: .gpt6Sol, endpoint: endpoint)))
        let runtime = try AgentRuntime(configuration: .init(
            authProvider: APIKeyAuthProvider(apiKey: "sk-fixture-key"), backend: backend, stateStore: InMemoryRuntimeStateStore()
        ))
        return RecoveryFront(
            prepare: { job, revision in
                var request = Request(text: prompt, executionMode: .ephemeral)
                request.selectionPurpose = "shipping-decision"
                let thread = try await runtime.createThread(title: "recovery")
                return try await runtime.prepareStructuredRecovery(
                    request, in: thread.id, response: Verdict.self, store: store, maximumAttempts: 3, retryPolicy: retryPolicy,
                    hostJobID: job, inputRevision: revision
                )
            },
            send: { handle, authorize in try await runtime.sendRecovering(handle, response: Verdict.self, store: store, authorizeAttempt: authorize) },
            acknowledge: { handle in try await runtime.acknowledgeStructuredRecovery(handle, store: store) }
        )
    }
}

func option(_ name: String, in arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func run() async throws -> Int32 {
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard let storePath = option("--store", in: arguments), let hostPath = option("--host", in: arguments),
          let baseURL = option("--base-url", in: arguments).flatMap(URL.init(string:))
    else { throw FixtureError.usage("--store DIR --host FILE --base-url URL required") }
    let job = option("--job", in: arguments) ?? "job-1"
    let revision = option("--revision", in: arguments) ?? "rev-1"
    let exitAfter = option("--exit-after", in: arguments)
    var killTarget: (RecoveryFileOperation, Int)?
    if let spec = option("--kill-at", in: arguments) {
        let parts = spec.split(separator: ":")
        guard parts.count == 2, let operation = RecoveryFileOperation(rawValue: String(parts[0])), let count = Int(parts[1]) else {
            throw FixtureError.usage("--kill-at <operation>:<n>")
        }
        killTarget = (operation, count)
    }
    let authorizationLog = URL(fileURLWithPath: hostPath).deletingLastPathComponent().appendingPathComponent("authorizations.log")

    let store = try AgentStructuredRecoveryStore(directory: URL(fileURLWithPath: storePath), fileSystem: KillingFileSystem(target: killTarget))
    let endpoint = try ResponsesEndpoint(baseURL: baseURL, profile: .publicAPI)
    let recovery = option("--api", in: arguments) == "runtime"
        ? try RecoveryFront.runtime(store: store, endpoint: endpoint) : RecoveryFront.engine(store: store, endpoint: endpoint)
    let host = HostStore(url: URL(fileURLWithPath: hostPath))
    var state = try host.load(job: job, revision: revision)

    // 1-2. Prepare once, and persist the handle in the host transaction before any send.
    if state.handle == nil {
        let handle = try await recovery.prepare(job, revision)
        state.handle = handle
        try host.save(state)
        if exitAfter == "handle" { exit(75) }
    }
    guard let handle = state.handle else { throw FixtureError.hostStore }

    // 3-5. Unless the job is committed: send (or reopen), commit, acknowledge.
    if state.committedReason == nil {
        let verdict = try await recovery.send(handle) { attempt in
            let line = "\(attempt.operationID.uuidString.lowercased()) \(attempt.id.uuidString.lowercased()) \(attempt.number) \(attempt.reason.rawValue)\n"
            if let handle = try? FileHandle(forWritingTo: authorizationLog) {
                handle.seekToEndOfFile()
                handle.write(Data(line.utf8))
                try? handle.close()
            } else {
                try? Data(line.utf8).write(to: authorizationLog)
            }
            if exitAfter == "authorization" { exit(76) }
            return true
        }
        if exitAfter == "receipt" { exit(73) }
        // The host transaction re-reads its store, checks the revision and commits idempotently by job +
        // revision: a job another process already committed is not applied again.
        var current = try host.load(job: job, revision: revision)
        guard current.revision == revision else { throw FixtureError.staleRevision }
        if current.committedRevision != revision {
            current.committedReason = verdict.reason
            current.committedRevision = revision
            current.commitCount += 1
            try host.save(current)
        }
        state = current
        if exitAfter == "commit" { exit(74) }
    }
    if !state.acknowledged {
        try await recovery.acknowledge(handle)
        state.acknowledged = true
        try host.save(state)
    }
    print(#"{"handle":"\#(handle)","commitCount":\#(state.commitCount),"acknowledged":\#(state.acknowledged)}"#)
    return 0
}

do {
    exit(try await run())
} catch {
    FileHandle.standardError.write(Data("fixture: \(error)\n".utf8))
    exit(2)
}
