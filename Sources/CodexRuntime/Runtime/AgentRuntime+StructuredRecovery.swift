public import CodexCore
public import CodexRecovery
public import Foundation
import CodexTransport

/// How a manual retry configures its successor.
public enum AgentStructuredRecoverySelection: Sendable, Hashable {
    /// Keep the source's frozen body and model configuration.
    case preserve
    /// Run model selection again on the source's original request (a saved `modelOverride` stays
    /// binding; the baseline is the runtime's model, else the backend's default), keep the source's
    /// instructions, and freeze the successor with the new configuration. A repeated action reuses what
    /// its first call froze, without selecting again.
    case reselect
}

extension AgentRuntime {
    // MARK: - Preparing and sending

    /// Freezes an ephemeral, tool-free structured request as a recovery operation in `store`, without
    /// sending anything: model selection runs once now (the request's override, the backend's
    /// preparation or the runtime's selector, the thread's model, the backend's default), and the
    /// effective model, instructions, format, input and canonical body are saved.
    ///
    /// ```swift
    /// let handle = try await runtime.prepareStructuredRecovery(
    ///     Request(text: "Summarise the news.", executionMode: .ephemeral), in: threadID, response: Digest.self,
    ///     store: recoveryStore, maximumAttempts: 3, hostJobID: job.id, inputRevision: job.revision
    /// )
    /// try host.save(handle, for: job)     // before sending
    /// ```
    ///
    /// - Parameters:
    ///   - request: An ephemeral request (`executionMode: .ephemeral`).
    ///   - threadID: The thread whose configuration and persona apply (nothing is written to it).
    ///   - response: The output type; its contract is validated locally before a result is saved.
    ///   - store: Where the operation lives.
    ///   - maximumAttempts: Total generation POSTs, 1…1000 (default 3).
    ///   - expiresAt: After this date no new attempt is authorized.
    ///   - retryPolicy: Which failures are replaced automatically, and the backoff.
    ///   - scope: Host scope for retention decisions.
    ///   - hostJobID: The host's stable job ID.
    ///   - inputRevision: The host's input revision.
    ///   - contractVersion: The host's output contract version.
    ///   - previousOperationID: An earlier operation of the same job this one replaces (diagnostics only).
    /// - Returns: The handle to persist with the host's job before ``sendRecovering(_:response:store:decoder:expectedContractVersion:authorizeAttempt:)``.
    /// - Throws: `structured_recovery_unsupported` (the backend cannot recover), `thread_not_found`,
    ///   model selection errors, ``CodexRecovery/AgentRecoveryError`` (`ephemeral_required`,
    ///   `invalid_recovery_configuration`, storage codes), or the credentials' error.
    public func prepareStructuredRecovery<Output: AgentStructuredOutput>(
        _ request: Request, in threadID: AgentThreadID, response: Output.Type, store: AgentStructuredRecoveryStore,
        maximumAttempts: Int = AgentRecoveryPreparationOptions.defaultMaximumAttempts, expiresAt: Date? = nil,
        retryPolicy: AgentRecoveryRetryPolicy = .init(), scope: String? = nil, hostJobID: String? = nil, inputRevision: String? = nil,
        contractVersion: String? = nil, previousOperationID: UUID? = nil
    ) async throws -> AgentStructuredRecoveryHandle {
        let adapter = try recoveryAdapter()
        let thread = try await resumeThread(threadID)
        try Self.validate(request)
        let model = try await frozenModel(for: request, thread: thread, format: Output.responseFormat, adapter: adapter)
        return try await adapter.recovery.prepare(
            request, format: Output.responseFormat, model: model, store: store,
            options: AgentRecoveryPreparationOptions(
                maximumAttempts: maximumAttempts, expiresAt: expiresAt, retryPolicy: retryPolicy, scope: scope, hostJobID: hostJobID,
                inputRevision: inputRevision, contractVersion: contractVersion, previousOperationID: previousOperationID
            )
        )
    }

    /// Delivers the operation's validated result: a saved completion at once (no request, no selector,
    /// no authorization callback), otherwise generation within the saved budget, asking
    /// `authorizeAttempt` before every POST (including a 401 reissue). Cancelling the calling task,
    /// ``signOut()`` and background expiry suspend the operation and keep its budget.
    ///
    /// - Throws: ``CodexRecovery/AgentRecoveryError`` (`exhausted`, `cancelled`, `operation_busy`,
    ///   `contract_mismatch`, …), ``CodexCore/AgentRuntimeError`` for the final failure, or
    ///   `CancellationError` when suspended.
    public func sendRecovering<Output: AgentStructuredOutput>(
        _ handle: AgentStructuredRecoveryHandle, response: Output.Type, store: AgentStructuredRecoveryStore,
        decoder: JSONDecoder = JSONDecoder(), expectedContractVersion: String? = nil,
        authorizeAttempt: @escaping @Sendable (AgentRecoveryAttempt) async throws -> Bool
    ) async throws -> Output {
        let recovery = try recoveryAdapter().recovery
        let span = configuration.telemetry?.startRootSpan("codexkit.recovery", attributes: ["codexkit.recovery.operation_id": .string(handle.operationID.uuidString.lowercased())])
        do {
            let output = try await AgentSpan.$current.withValue(span) {
                try await recoveries.running(handle, store: store, recovery: recovery) {
                    try await recovery.sendRecovering(
                        handle, response: response, store: store, decoder: decoder, expectedContractVersion: expectedContractVersion,
                        authorizeAttempt: authorizeAttempt
                    )
                }
            }
            span?.setStatus(.ok)
            span?.end()
            return output
        } catch {
            let code = (error as? AgentRecoveryError)?.code.rawValue ?? (error as? AgentRuntimeError)?.code.rawValue
            span?.recordFailure(code: code ?? (error is CancellationError ? "cancelled" : "failed"))
            span?.end()
            throw error
        }
    }

    /// Creates (or, for the same action and settings, returns) the one linked successor of an exhausted,
    /// terminally failed, expired or blocked operation, with a fresh budget; it sends nothing.
    ///
    /// ```swift
    /// let retryHandle = try await runtime.retryStructuredRecovery(
    ///     failedHandle, retryActionID: savedUserActionID, store: recoveryStore, maximumAttempts: 2, selection: .preserve
    /// )
    /// ```
    ///
    /// - Throws: ``CodexRecovery/AgentRecoveryError`` `retry_not_allowed`, `retry_already_created`,
    ///   `retry_configuration_mismatch`, `cancelled`, `state_unavailable`, `account_mismatch`.
    public func retryStructuredRecovery(
        _ handle: AgentStructuredRecoveryHandle, retryActionID: String, store: AgentStructuredRecoveryStore, maximumAttempts: Int,
        selection: AgentStructuredRecoverySelection = .preserve, expiresAt: Date? = nil, retryPolicy: AgentRecoveryRetryPolicy? = nil
    ) async throws -> AgentStructuredRecoveryHandle {
        let adapter = try recoveryAdapter()
        var reselect: AgentStructuredRecovery.Reselection?
        if selection == .reselect {
            // Runs only when a new successor is reserved, after the engine checked the account and the
            // source's eligibility; the source's instructions are kept, only the model is chosen again.
            reselect = { [self] source in
                let baseline = AgentThread(configuration: AgentThreadConfiguration(), createdAt: configuration.wallClock.now())
                let model = try await selectModel(for: source.request, thread: baseline, responseFormat: source.format)
                return AgentRecoveryModelConfiguration(
                    model: model.model.rawValue, reasoningEffort: model.reasoningEffort, enableReasoningSummaries: adapter.enableReasoningSummaries,
                    instructions: source.model.instructions
                )
            }
        }
        return try await adapter.recovery.retry(
            handle, retryActionID: retryActionID, store: store, maximumAttempts: maximumAttempts, reselect: reselect,
            expiresAt: expiresAt, retryPolicy: retryPolicy
        )
    }

    // MARK: - Lifecycle

    /// Stops the operation and keeps its budget and any saved completion; works from another runtime
    /// on the same store while the owner runs.
    public func suspendStructuredRecovery(_ handle: AgentStructuredRecoveryHandle, store: AgentStructuredRecoveryStore) async throws {
        try await recoveryAdapter().recovery.suspend(handle, store: store)
    }

    /// Cancels the operation permanently: no generation, delivery or manual retry from it; its saved
    /// content stays until ``abandonStructuredRecovery(_:store:)``.
    public func cancelStructuredRecovery(_ handle: AgentStructuredRecoveryHandle, store: AgentStructuredRecoveryStore) async throws {
        try await recoveryAdapter().recovery.cancel(handle, store: store)
    }

    /// Records the host's commit: removes the saved request and result, keeping a small marker, so
    /// repeating it is safe. Call it only after the host's commit succeeded.
    public func acknowledgeStructuredRecovery(_ handle: AgentStructuredRecoveryHandle, store: AgentStructuredRecoveryStore) async throws {
        try await recoveryAdapter().recovery.acknowledge(handle, store: store)
    }

    /// Removes an operation the host no longer wants, with its content.
    public func abandonStructuredRecovery(_ handle: AgentStructuredRecoveryHandle, store: AgentStructuredRecoveryStore) async throws {
        try await recoveryAdapter().recovery.abandon(handle, store: store)
    }

    // MARK: - Reading

    /// The operation's state, availability, blockers, budget and suggested actions; read-only, allowed
    /// while it runs, and redacted for another account. Needs no recovery-capable backend, only
    /// credentials.
    public func structuredRecoveryStatus(_ handle: AgentStructuredRecoveryHandle, store: AgentStructuredRecoveryStore) async throws -> AgentStructuredRecoveryStatus {
        try await readingRecovery().status(handle, store: store)
    }

    /// The saved validated result with its contract and lineage; needs no recovery-capable backend, but
    /// enforces the account and permanent cancellation.
    public func structuredRecoveryReceipt(_ handle: AgentStructuredRecoveryHandle, store: AgentStructuredRecoveryStore) async throws -> AgentStructuredRecoveryReceipt {
        try await readingRecovery().receipt(handle, store: store)
    }

    /// The signed-in account's operations in `store` (optionally one scope), with unreadable record IDs
    /// for the host to reconcile.
    /// - Throws: `not_signed_in` when no account is known, or storage codes.
    public func structuredRecoveries(store: AgentStructuredRecoveryStore, scope: String? = nil) async throws -> AgentRecoveryInventory {
        guard let binding = try await readingRecovery().authProvider.currentBinding() else {
            throw AgentRuntimeError(code: .notSignedIn, message: "no signed-in account to list recovery operations for")
        }
        return try store.inventory(binding: binding, scope: scope)
    }

    // MARK: - Support

    /// The backend's recovery adapter.
    /// - Throws: `structured_recovery_unsupported` for a backend that cannot recover.
    func recoveryAdapter() throws -> AgentStructuredRecoveryAdapter {
        guard let supporting = configuration.backend as? any AgentBackendStructuredRecoverySupporting else {
            throw AgentRuntimeError(
                code: .structuredRecoveryUnsupported,
                message: "the runtime's backend cannot run structured recovery (use CodexResponsesBackend or a wrapper that delegates its adapter)"
            )
        }
        return supporting.structuredRecoveryAdapter
    }

    /// An engine for reads: the backend's, else one over the runtime's credentials that never sends.
    private func readingRecovery() throws -> AgentStructuredRecovery {
        if let adapter = try? recoveryAdapter() { return adapter.recovery }
        guard let authProvider = configuration.authProvider else { return try recoveryAdapter().recovery }
        return AgentStructuredRecovery(
            configuration: .init(endpoint: .chatGPT), httpClient: NoNetworkHTTPClient(), authProvider: authProvider,
            wallClock: configuration.wallClock, logSink: configuration.logSink
        )
    }

    /// The model configuration an operation freezes: selection, then the backend's settings.
    private func frozenModel(
        for request: Request, thread: AgentThread, format: AgentStructuredOutputFormat, adapter: AgentStructuredRecoveryAdapter
    ) async throws -> AgentRecoveryModelConfiguration {
        let instructions = try instructions(for: request, thread: thread)
        let model = try await selectModel(for: request, thread: thread, responseFormat: format)
        return AgentRecoveryModelConfiguration(
            model: model.model.rawValue, reasoningEffort: model.reasoningEffort, enableReasoningSummaries: adapter.enableReasoningSummaries,
            instructions: AgentBackendTurnRequest.compileInstructions(persona: instructions.persona, skills: instructions.skills, base: adapter.baseInstructions)
        )
    }
}

/// The HTTP client of a read-only recovery engine: status and receipts never send, so any request is
/// refused.
private struct NoNetworkHTTPClient: HTTPClient {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        throw AgentRuntimeError(code: .structuredRecoveryUnsupported, message: "the runtime's backend cannot run structured recovery")
    }
}
