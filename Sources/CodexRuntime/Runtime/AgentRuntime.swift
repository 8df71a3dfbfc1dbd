public import CodexCore
public import CodexTransport
import Foundation
import Synchronization

/// What a host app talks to: threads, turns and their events over a backend and a state store.
///
/// Threads, the four send paths (``stream(_:in:)``, ``stream(_:in:response:options:)``,
/// ``send(_:in:)``, ``send(_:in:response:)``) and ``sendWithSummary(_:in:)``, with the bounded event
/// channel, turn limits and the documented cancellation rules.
///
/// ```swift
/// let runtime = try AgentRuntime(configuration: .init(
///     authProvider: auth, backend: backend, stateStore: try SQLiteRuntimeStateStore(path: path),
///     maximumBufferedEvents: 64, turnLimits: .init(maximumToolCalls: 128, maximumDuration: 300)
/// ))
/// let thread = try await runtime.createThread(title: "Orders", model: "gpt-6-astra", reasoningEffort: .low)
/// ```
public final class AgentRuntime: Sendable {
    /// The runtime's collaborators and limits.
    public struct Configuration: Sendable {
        /// Supplies credentials (and the account binding) for the backend. A session-managing provider
        /// (``CodexTransport/ChatGPTSessionManager``) also serves ``AgentRuntime/signIn(_:)``,
        /// ``AgentRuntime/useSession(_:)``, ``AgentRuntime/signOut()`` and
        /// ``AgentRuntime/authenticationState()``.
        public var authProvider: (any AuthProvider)?
        /// Where the runtime keeps the signed-in ChatGPT session: the store of the
        /// ``CodexTransport/ChatGPTSessionManager`` passed as `authProvider` (and to the backend), which
        /// restores it on first use, saves renewals and removes it on sign-out. A secure store with no
        /// provider, another provider, or a manager over another store fails construction.
        public var secureStore: FileSecureStore?
        /// Runs model turns.
        public var backend: any AgentBackend
        /// Asks the user about approval-gated tools.
        public var approvalPresenter: (any AgentApprovalPresenting)?
        /// Threads, history and turns.
        public var stateStore: any RuntimeStateStore
        /// The bounded event queue's capacity: default 64, clamped to 1…4,096.
        public var maximumBufferedEvents: Int
        /// Tool-call and duration budgets per turn: default 128 calls and 300 s.
        public var turnLimits: AgentTurnLimits
        /// Receives log-safe events.
        public var logSink: any AgentLogSink
        /// Dates for threads and turns.
        public var wallClock: any AgentWallClock
        /// The clock the turn duration budget and the state store's retry pauses run on.
        public var clock: any Clock<Duration>
        /// The model of threads without their own; `nil` uses the backend's default model (for
        /// ``CodexResponsesBackend``, its configured model), else ``CodexCore/CodexModel/default``.
        public var model: CodexModel?
        /// The runtime's persona (a thread persona replaces it; a request's `personaOverride` replaces both).
        public var persona: AgentPersonaStack?
        /// Host tools the model may call.
        public var tools: [AgentTool]
        /// Sources of tools that may change between turns (an MCP server's), asked at the start of each
        /// turn; their tools join ``tools``.
        public var toolProviders: [any AgentToolProvider]
        /// The most parallel-safe tool calls that run at once: default 4; values below 1 become 1.
        public var maximumParallelToolCalls: Int
        /// Fetches images tool results name by URL; `nil` (the default) makes a
        /// ``CodexTransport/DefaultHTTPClient`` on first use.
        public var toolImageHTTPClient: (any HTTPClient)?
        /// Skills threads and requests may select by ID.
        public var skills: [AgentSkill]
        /// The host's model policy for turns without a request override (``CodexModelSelecting``);
        /// `nil`: the thread's model, else the backend's default.
        public var modelSelector: (any CodexModelSelecting)?
        /// The host's permission to keep working: when it expires, active turns are interrupted and
        /// running structured recovery sends are suspended (``AgentBackgroundActivity``).
        public var backgroundActivity: AgentBackgroundActivity?
        /// How often a turn whose first request a backend could not get accepted (its readiness failed
        /// with a retryable error no lower layer retried) is started again, with backoff on ``clock``:
        /// default 3 attempts. The built-in backend's transport retries its own failures, so they are
        /// not retried again here.
        public var readinessRetryPolicy: RetryPolicy
        /// When and how threads' context is compacted (``AgentContextCompactionConfiguration``; disabled
        /// by default).
        public var contextCompaction: AgentContextCompactionConfiguration
        /// The memory turns retrieve and completed turns may capture (``AgentMemoryConfiguration``); `nil`
        /// (the default) for none.
        public var memory: AgentMemoryConfiguration?
        /// What happens to a persistent turn a crashed process left running: recorded interrupted (the
        /// default), or durable and resumed (``AgentTurnRecoveryPolicy``; the state store must keep
        /// journals, ``CodexCore/TurnJournaling``: the SQLite and in-memory stores do).
        public var turnRecovery: AgentTurnRecoveryPolicy
        /// OpenTelemetry spans and metrics for turns, model requests, tool and MCP calls and storage
        /// commits (``CodexCore/AgentTelemetry``, exported by ``OTLPHTTPExporter``); `nil` (the default)
        /// records nothing.
        public var telemetry: AgentTelemetry?

        /// Creates a configuration; ``AgentRuntime/init(configuration:)`` validates it.
        public init(
            authProvider: (any AuthProvider)? = nil, secureStore: FileSecureStore? = nil, backend: any AgentBackend,
            approvalPresenter: (any AgentApprovalPresenting)? = nil, stateStore: any RuntimeStateStore,
            maximumBufferedEvents: Int = 64, turnLimits: AgentTurnLimits = .default,
            logSink: any AgentLogSink = NoOpAgentLogSink(), wallClock: any AgentWallClock = SystemWallClock(),
            clock: any Clock<Duration> = ContinuousClock(), model: CodexModel? = nil, persona: AgentPersonaStack? = nil,
            tools: [AgentTool] = [], toolProviders: [any AgentToolProvider] = [], skills: [AgentSkill] = [], maximumParallelToolCalls: Int = 4,
            toolImageHTTPClient: (any HTTPClient)? = nil, readinessRetryPolicy: RetryPolicy = .default,
            modelSelector: (any CodexModelSelecting)? = nil, backgroundActivity: AgentBackgroundActivity? = nil,
            contextCompaction: AgentContextCompactionConfiguration = .init(), memory: AgentMemoryConfiguration? = nil,
            turnRecovery: AgentTurnRecoveryPolicy = .interrupt, telemetry: AgentTelemetry? = nil
        ) {
            self.authProvider = authProvider
            self.secureStore = secureStore
            self.backend = backend
            self.approvalPresenter = approvalPresenter
            self.stateStore = stateStore
            self.maximumBufferedEvents = maximumBufferedEvents
            self.turnLimits = turnLimits
            self.logSink = logSink
            self.wallClock = wallClock
            self.clock = clock
            self.model = model
            self.persona = persona
            self.tools = tools
            self.toolProviders = toolProviders
            self.skills = skills
            self.maximumParallelToolCalls = maximumParallelToolCalls
            self.toolImageHTTPClient = toolImageHTTPClient
            self.readinessRetryPolicy = readinessRetryPolicy
            self.modelSelector = modelSelector
            self.backgroundActivity = backgroundActivity
            self.contextCompaction = contextCompaction
            self.memory = memory
            self.turnRecovery = turnRecovery
            self.telemetry = telemetry
        }
    }

    /// The validated configuration (`maximumBufferedEvents` already clamped).
    public let configuration: Configuration
    let writer: RuntimeStateWriter
    /// Every write the state store accepted, for observations.
    let changes = RuntimeChangeFeed()
    let activeTurns = ActiveTurnRegistry()
    /// Structured recovery sends running now.
    let recoveries = ActiveRecoveries()
    /// The configured host tools with their compiled input schemas.
    let tools: ToolRegistry
    /// Each turn's tools: the configured ones and the providers'.
    let turnTools: ToolRegistryCache
    /// Fetches the images tool results name.
    let toolImages: ToolImageDownloader
    /// Automatic memory captures running in the background.
    let memoryCaptures = MemoryCaptureTasks()
    /// This runtime's owner lease and ID, recorded in its turns.
    let ownership: TurnOwnership
    /// The handler registered with the configuration's background activity.
    private let expiryHandler = Mutex<UInt64?>(nil)

    /// Validates the configuration (and offers the auth provider to a backend that can adopt it,
    /// ``AgentBackendAuthenticating``, such as a ``CodexResponsesBackend`` created without one): turn limits must have a non-negative tool count and a finite,
    /// positive duration of at most one year (`nil` removes a limit); tool names must be valid and
    /// unique and every input schema one CodexSchema can enforce; `maximumParallelToolCalls` is raised to
    /// at least 1; the event capacity is clamped to 1…4,096; a `secureStore` needs a
    /// ``CodexTransport/ChatGPTSessionManager`` over that same store as the auth provider. When the state store issues owner leases
    /// (``CodexCore/RuntimeOwnerLeasing``: the SQLite and in-memory stores do), the runtime takes one and
    /// holds it until it is released, so runtimes in other processes never treat its running turns as
    /// abandoned.
    /// - Throws: ``CodexCore/AgentRuntimeError`` `invalid_turn_limits`, `invalid_tool_definition` or
    ///   `invalid_configuration` (also for a backend that already took another runtime's auth provider),
    ///   or the store's error when an owner lease cannot be taken.
    public init(configuration: Configuration) throws {
        try configuration.turnLimits.validate()
        if configuration.turnRecovery.resumes, !(configuration.stateStore is any TurnJournaling) {
            throw AgentRuntimeError(code: .invalidConfiguration, message: "resuming turns needs a state store that keeps turn journals")
        }
        tools = try ToolRegistry(configuration.tools)
        turnTools = ToolRegistryCache(configured: tools, configuredTools: configuration.tools, providers: configuration.toolProviders)
        toolImages = ToolImageDownloader(httpClient: configuration.toolImageHTTPClient, logSink: configuration.logSink)
        let authProvider = try Self.sessionAuthProvider(configuration)
        ownership = try TurnOwnership(store: configuration.stateStore)
        writer = RuntimeStateWriter(store: configuration.stateStore, clock: configuration.clock, logSink: configuration.logSink, changes: changes)
        var validated = configuration
        validated.authProvider = authProvider
        validated.maximumParallelToolCalls = max(1, configuration.maximumParallelToolCalls)
        validated.maximumBufferedEvents = min(
            max(configuration.maximumBufferedEvents, AgentEventChannel<Int>.capacityRange.lowerBound), AgentEventChannel<Int>.capacityRange.upperBound
        )
        self.configuration = validated
        if let authProvider, let backend = configuration.backend as? any AgentBackendAuthenticating {
            try backend.adoptAuthProvider(authProvider)
        }
        if let activity = configuration.backgroundActivity {
            let id = activity.onExpiry { [weak self] in self?.stopActiveWork() }
            expiryHandler.withLock { $0 = id }
        }
    }

    deinit {
        if let id = expiryHandler.withLock({ $0 }) { configuration.backgroundActivity?.removeHandler(id) }
    }

    // MARK: - Threads

    /// Creates and saves a thread.
    /// - Parameters:
    ///   - title: A title for the host's lists.
    ///   - model: The thread's model, or `nil` for the backend's default.
    ///   - reasoningEffort: The thread's effort, or `nil` for the model's default.
    ///   - persona: The thread's persona stack.
    ///   - skillIDs: The thread's skills.
    /// - Returns: The saved thread, idle, bound to the current account when one is known.
    public func createThread(
        title: String? = nil, model: CodexModel? = nil, reasoningEffort: ReasoningEffort? = nil, persona: AgentPersonaStack? = nil,
        skillIDs: [String] = []
    ) async throws -> AgentThread {
        let binding = await configuration.authProvider?.currentBinding()
        let thread = AgentThread(
            title: title, configuration: AgentThreadConfiguration(model: model, reasoningEffort: reasoningEffort), persona: persona,
            skillIDs: skillIDs, status: .idle, accountBinding: binding, createdAt: configuration.wallClock.now()
        )
        try await writer.wait(writer.enqueue { store in try await store.upsertThread(thread) })
        configuration.logSink.record(AgentLogEvent(
            level: .info, category: .runtime, name: "runtime.thread.created", metadata: ["thread_id": thread.id.rawValue]
        ))
        return thread
    }

    /// All threads, most recently updated first (after a restart, what the state store kept).
    public func threads() async throws -> [AgentThread] {
        try await writer.read { store in try await store.threads() }
    }

    /// Resumes a thread from the state store (for example after a restart).
    /// - Throws: ``CodexCore/AgentRuntimeError`` `thread_not_found`.
    public func resumeThread(_ id: AgentThreadID) async throws -> AgentThread {
        guard let thread = try await writer.read({ store in try await store.thread(id) }) else {
            throw AgentRuntimeError(code: .threadNotFound, message: "no such thread")
        }
        return thread
    }

    /// Updates a thread's title, model, effort, persona or skills (others stay).
    /// - Throws: ``CodexCore/AgentRuntimeError`` `thread_not_found`.
    ///
    /// The read, the change and the write run as one step of the runtime's ordered write queue, so they
    /// never interleave with a turn's status updates. The thread's status and pending wait are the
    /// runtime's to set.
    public func updateThread(_ id: AgentThreadID, _ change: @escaping @Sendable (inout AgentThread) -> Void) async throws -> AgentThread {
        let now = configuration.wallClock.now()
        let updated = try await writer.read { store -> AgentThread? in
            guard var thread = try await store.thread(id) else { return nil }
            let status = thread.status
            let pending = thread.pending
            change(&thread)
            thread.id = id
            thread.status = status
            thread.pending = pending
            thread.updatedAt = now
            try await store.upsertThread(thread)
            return thread
        }
        guard let updated else { throw AgentRuntimeError(code: .threadNotFound, message: "no such thread") }
        return updated
    }

    /// Deletes a thread with its history, turns and attachments.
    public func deleteThread(_ id: AgentThreadID) async throws {
        try await writer.wait(writer.enqueue { store in try await store.deleteThread(id) })
        configuration.logSink.record(AgentLogEvent(level: .info, category: .runtime, name: "runtime.thread.deleted", metadata: ["thread_id": id.rawValue]))
    }
}
