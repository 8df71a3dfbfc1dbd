public import CodexCore
public import CodexTransport

extension AgentRuntime {
    /// The models the signed-in account may use.
    ///
    /// ```swift
    /// let catalog = try await runtime.listModels()
    /// let choices = catalog.visibleModels
    /// let refreshed = try await runtime.listModels(policy: .refresh)    // a successful fetch, or an error
    /// let offline = try await runtime.listModels(policy: .cachedOnly)   // no network
    /// ```
    ///
    /// A backend that discovers models (``AgentBackendModelDiscovering``: ``CodexResponsesBackend`` fetches
    /// the Codex `/models` catalog, cached per account for 300 s with ETag revalidation) answers; any
    /// other backend gets the bundled catalog (`source == .bundled`). Unknown model IDs and efforts stay
    /// usable in requests whatever the catalog lists.
    ///
    /// - Parameter policy: `.preferCached` (default: a fresh cache, else a refresh, falling back to a stale
    ///   cache or the bundled catalog for failures other than authentication), `.refresh` (failures are
    ///   thrown) or `.cachedOnly` (never the network).
    /// - Throws: Authentication failures always (`not_signed_in`, `unauthorized`, …); other failures only
    ///   under `.refresh`.
    public func listModels(policy: CodexModelRefreshPolicy = .preferCached) async throws -> CodexModelCatalogSnapshot {
        guard let discovering = configuration.backend as? any AgentBackendModelDiscovering else { return .bundled }
        return try await discovering.listModels(policy: policy)
    }

    /// The latest account limits observed for the signed-in account, one snapshot per limit family:
    /// from responses' rate-limit headers (error responses included) and `codex.rate_limits` events.
    /// Never a new request; empty until a response reported limits, or when the backend does not report
    /// them (``AgentBackendRateLimitReporting``).
    ///
    /// ```swift
    /// for limit in try await runtime.rateLimits() {
    ///     if let window = limit.primary { print(window.remainingPercent, window.resetsAt as Any) }
    /// }
    /// ```
    ///
    /// Windows and credits a response did not report are `nil` (unavailable), never zero. After an
    /// account switch, only the new account's limits are returned.
    public func rateLimits() async throws -> [AgentRateLimitSnapshot] {
        guard let reporting = configuration.backend as? any AgentBackendRateLimitReporting else { return [] }
        return await reporting.rateLimits()
    }

    /// Creates and saves a thread with a model configuration.
    ///
    /// ```swift
    /// let thread = try await runtime.createThread(title: "Research", configuration: AgentThreadConfiguration(model: .gpt6Astra))
    /// ```
    public func createThread(
        title: String? = nil, configuration threadConfiguration: AgentThreadConfiguration, persona: AgentPersonaStack? = nil,
        skillIDs: [String] = []
    ) async throws -> AgentThread {
        try await createThread(
            title: title, model: threadConfiguration.model, reasoningEffort: threadConfiguration.reasoningEffort, persona: persona,
            skillIDs: skillIDs
        )
    }

    /// Replaces a thread's model configuration; later turns of the thread use it (a running turn keeps
    /// the model it started with).
    /// - Throws: ``CodexCore/AgentRuntimeError`` `thread_not_found`.
    @discardableResult
    public func updateThreadConfiguration(_ threadConfiguration: AgentThreadConfiguration, for threadID: AgentThreadID) async throws -> AgentThread {
        try await updateThread(threadID) { $0.configuration = threadConfiguration }
    }
}
