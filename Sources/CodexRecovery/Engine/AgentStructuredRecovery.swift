public import CodexCore
public import CodexTransport
public import Foundation

/// Structured request recovery: prepares a frozen, tool-free structured request in an
/// ``AgentStructuredRecoveryStore``, sends it within a persisted attempt budget with one host
/// authorization per generation POST, and delivers the validated result through a saved receipt until
/// the host acknowledges it.
///
/// ```swift
/// let recovery = AgentStructuredRecovery(configuration: .init(endpoint: .chatGPT), httpClient: DefaultHTTPClient(), authProvider: auth)
/// let handle = try await recovery.prepare(request, format: Verdict.responseFormat, model: .init(model: "gpt-6-astra"), store: store)
/// try host.saveHandle(handle, forJob: job)                       // before sending
/// let verdict = try await recovery.sendRecovering(handle, response: Verdict.self, store: store) { attempt in
///     try await host.authorize(attempt.operationID, attempt.id)  // idempotent per attempt ID
/// }
/// try host.commit(verdict, job: job, revision: revision)          // idempotent by job + revision
/// try recovery.acknowledge(handle, store: store)                  // only after the commit
/// ```
public final class AgentStructuredRecovery: Sendable {
    /// Transport and scheduling options.
    public struct Configuration: Sendable {
        /// Where generation requests go; a record prepared for another endpoint is blocked.
        public var endpoint: ResponsesEndpoint
        /// Request timeouts (connect, first byte, idle). There is no elapsed-time generation deadline.
        public var timeouts: HTTPTimeouts
        /// The largest SSE event accepted.
        public var maximumEventBytes: Int
        /// How often a running execution checks the lifecycle command record. Default 50 ms.
        public var lifecyclePollInterval: Duration
        /// The longest cooldown honoured from a saved `nextAttemptAt` (a clock jump cannot make an
        /// operation wait longer). Default one day.
        public var maximumCooldown: TimeInterval
        /// The largest structured payload accepted: 4 MiB.
        public var maximumPayloadBytes: Int

        /// Creates a configuration.
        public init(
            endpoint: ResponsesEndpoint, timeouts: HTTPTimeouts = .init(), maximumEventBytes: Int = CodexLimits.maximumEventBytes,
            lifecyclePollInterval: Duration = .milliseconds(50), maximumCooldown: TimeInterval = 86_400,
            maximumPayloadBytes: Int = CodexLimits.maximumStructuredPayloadBytes
        ) {
            self.endpoint = endpoint
            self.timeouts = timeouts
            self.maximumEventBytes = maximumEventBytes
            self.lifecyclePollInterval = lifecyclePollInterval
            self.maximumCooldown = maximumCooldown
            self.maximumPayloadBytes = maximumPayloadBytes
        }
    }

    let configuration: Configuration
    let httpClient: any HTTPClient
    package let authProvider: any AuthProvider
    let clock: any Clock<Duration>
    let wallClock: any AgentWallClock
    let logSink: any AgentLogSink

    /// Creates the recovery service.
    /// - Parameters:
    ///   - configuration: Endpoint, timeouts and scheduling.
    ///   - httpClient: The HTTP seam (``CodexTransport/DefaultHTTPClient`` in production: libcurl on Linux).
    ///   - authProvider: Credentials; an operation only ever runs for the account binding it was prepared for.
    ///   - clock: Waits (cooldowns, lifecycle polling).
    ///   - wallClock: Dates saved in records (expiry, `nextAttemptAt`).
    ///   - logSink: Receives `recovery.*` events (no prompts, outputs, tokens, account IDs, scopes or job strings).
    public init(
        configuration: Configuration, httpClient: any HTTPClient, authProvider: any AuthProvider,
        clock: any Clock<Duration> = ContinuousClock(), wallClock: any AgentWallClock = SystemWallClock(),
        logSink: any AgentLogSink = NoOpAgentLogSink()
    ) {
        self.configuration = configuration
        self.httpClient = httpClient
        self.authProvider = authProvider
        self.clock = clock
        self.wallClock = wallClock
        self.logSink = logSink
    }

    // MARK: - Prepare

    /// Freezes a structured request and saves it as a new operation, without sending anything.
    ///
    /// The saved request holds the effective model configuration, instructions, output format, input and
    /// the canonical Responses body (`tools: []`, `tool_choice: "none"`, `store: false`, `stream: true`,
    /// no credentials) with its SHA-256. Every attempt, including a 401 reissue, sends exactly those bytes.
    /// - Parameters:
    ///   - request: An ephemeral request (`executionMode == .ephemeral`).
    ///   - format: The output contract; validated locally before any result is saved.
    ///   - model: The already-resolved model configuration.
    ///   - store: Where the operation lives.
    ///   - options: Budget, expiry, retry policy and host metadata.
    ///   - requiredTools: Tools the request would need; recovery is tool-free, so any is refused.
    /// - Returns: The handle to persist in the host's job transaction before sending.
    /// - Throws: ``AgentRecoveryError`` (`ephemeral_required`, `tools_unsupported`,
    ///   `invalid_recovery_configuration`, storage codes) or ``CodexCore/AgentRuntimeError`` when no
    ///   credentials are available or the format is unusable.
    public func prepare(
        _ request: Request, format: AgentStructuredOutputFormat, model: AgentRecoveryModelConfiguration,
        store: AgentStructuredRecoveryStore, options: AgentRecoveryPreparationOptions = .init(), requiredTools: [ToolDefinition] = []
    ) async throws -> AgentStructuredRecoveryHandle {
        try await prepare(
            request, format: format, model: model, store: store, options: options, requiredTools: requiredTools,
            operationID: UUID(), lineage: nil
        )
    }

    /// Lineage of a manual-retry successor.
    struct Lineage {
        var previousOperationID: UUID
        var rootOperationID: UUID
        var retryActionID: String
    }

    func prepare(
        _ request: Request, format: AgentStructuredOutputFormat, model: AgentRecoveryModelConfiguration,
        store: AgentStructuredRecoveryStore, options: AgentRecoveryPreparationOptions, requiredTools: [ToolDefinition],
        operationID: UUID, lineage: Lineage?
    ) async throws -> AgentStructuredRecoveryHandle {
        guard request.executionMode == .ephemeral else {
            throw AgentRecoveryError(code: .ephemeralRequired, message: "structured recovery needs an ephemeral request, not a persistent thread")
        }
        guard requiredTools.isEmpty else {
            throw AgentRecoveryError(code: .toolsUnsupported, message: "structured recovery is tool-free; \(requiredTools.count) required tool(s) given")
        }
        try Self.check(options)
        _ = try format.validator()
        let credentials = try await authProvider.credentials()
        let body = Self.body(for: request, format: format, model: model)
        let bodyText = String(decoding: body, as: UTF8.self)
        let now = wallClock.now()
        let record = RecoveryOperationRecord(
            operationID: operationID, binding: credentials.binding, scope: options.scope, hostJobID: options.hostJobID,
            inputRevision: options.inputRevision, contractVersion: options.contractVersion,
            request: .init(
                endpoint: configuration.endpoint.baseURL.absoluteString, model: model.model, reasoningEffort: model.reasoningEffort?.rawValue,
                instructions: model.instructions, format: format, body: bodyText, digest: SHA256.hexDigest(of: body)
            ),
            retryPolicy: options.retryPolicy, maximumAttempts: options.maximumAttempts, expiresAt: options.expiresAt, state: .prepared,
            // The first attempt's ID is saved now, so asking the host about it needs no write of its own.
            attemptsUsed: 0, pendingAttemptID: UUID(), attempts: [], nextAttemptAt: nil, responseID: nil, lastSequenceNumber: nil,
            lastFailure: nil, blocker: nil, completedPayload: nil, createdAt: now, updatedAt: now, completedAt: nil,
            previousOperationID: lineage?.previousOperationID ?? options.previousOperationID, rootOperationID: lineage?.rootOperationID ?? operationID,
            retryActionID: lineage?.retryActionID, successor: nil, originalRequest: request
        )
        try await store.perform { () throws(AgentRecoveryError) in
            guard let partition = try store.partition(binding: credentials.binding, scope: options.scope, create: true) else {
                throw AgentRecoveryError(code: .storageFailure, message: "cannot create the operation's directory", operationID: operationID)
            }
            let lease = try partition.lease(operationID)
            if try partition.load(RecoveryOperationRecord.self, operationID) == nil {
                try partition.save(record)
            }
            store.remember(operationID, in: partition)
            withExtendedLifetime(lease) {}
        }
        emit("recovery.operation.prepared", record)
        return AgentStructuredRecoveryHandle(operationID: operationID)
    }

    static func check(_ options: AgentRecoveryPreparationOptions) throws(AgentRecoveryError) {
        guard RecoveryOperationRecord.maximumAttemptsRange.contains(options.maximumAttempts) else {
            throw AgentRecoveryError(code: .invalidRecoveryConfiguration, message: "maximumAttempts must be 1...1000, not \(options.maximumAttempts)")
        }
        let identifiers = [("scope", options.scope), ("hostJobID", options.hostJobID), ("inputRevision", options.inputRevision),
                           ("contractVersion", options.contractVersion)]
        for (name, value) in identifiers where (value?.utf8.count ?? 0) > AgentRecoveryPreparationOptions.maximumIdentifierBytes {
            throw AgentRecoveryError(code: .invalidRecoveryConfiguration, message: "\(name) is longer than 1,024 bytes")
        }
    }

    /// The canonical, tool-free body for `request`.
    static func body(for request: Request, format: AgentStructuredOutputFormat, model: AgentRecoveryModelConfiguration) -> [UInt8] {
        var wire = ResponsesRequest(model: model.model, instructions: model.instructions)
        wire.input = request.developerMessages.map(ResponsesInputItem.developer) + [.user(request.text, images: request.images)]
        wire.tools = []
        wire.toolChoice = .none
        wire.parallelToolCalls = false
        if model.reasoningEffort != nil || model.enableReasoningSummaries {
            wire.reasoning = .init(effort: model.reasoningEffort, summary: model.enableReasoningSummaries ? "auto" : nil)
        }
        wire.store = false
        wire.stream = true
        wire.textFormat = .init(format)
        return wire.body()
    }
}
