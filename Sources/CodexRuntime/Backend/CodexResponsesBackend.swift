public import CodexCore
import CodexRecovery
public import CodexTransport

/// The built-in model backend: runs turns against the OpenAI Responses API (the ChatGPT/Codex backend
/// or the public API), stateless (`store: false`) and streamed.
///
/// ```swift
/// let backend = CodexResponsesBackend(configuration: .init(model: .gpt6Astra, enableImageGeneration: true))
/// let runtime = try AgentRuntime(configuration: .init(authProvider: auth, backend: backend, stateStore: store))
/// // or, used directly: CodexResponsesBackend(configuration: …, authProvider: auth)
/// let turn = try await backend.startTurn(AgentBackendTurnRequest(
///     threadID: threadID, turnID: AgentTurnID(), request: Request(text: "Hello"), model: .gpt6Astra
/// ))
/// for try await event in turn.events {
///     if case .toolCallRequested(let call) = event {
///         try await turn.submitToolResult(.success(call, text: "42"))
///     }
/// }
/// ```
///
/// Each turn sends the replayed history, the request's developer messages, the user message and the
/// response contract, then runs model passes until a response asks for no tools:
/// - a response must end with `response.completed`; one that ends without it fails with
///   `responses_stream_disconnected`. The retry policy replays the same POST only before any output;
/// - function calls of a response are announced after its `response.completed` — one as
///   ``CodexCore/AgentBackendEvent/toolCallRequested(_:)``, several as
///   ``CodexCore/AgentBackendEvent/toolCallsRequested(_:)`` — and the next pass waits until
///   `submitToolResult` accepted one result per call (in any order). Unknown, duplicate, mismatched and
///   late results throw `invalid_tool_result`. The next pass sends the calls and their outputs in the
///   model's call order, after the response's reasoning items and messages;
/// - generated images (`image_generation_call` with a base64 `result`, even while `generating`) become
///   assistant messages with one ``CodexCore/AgentImageAttachment`` each;
/// - the turn ends with ``CodexCore/AgentBackendEvent/turnCompleted(_:)`` carrying the last assistant
///   message, the usage summed over passes and the last response ID.
///
/// Budgets (``CodexResponsesBackendConfiguration/maximumModelPasses``,
/// ``CodexResponsesBackendConfiguration/maximumResponseBytes``,
/// ``CodexResponsesBackendConfiguration/maximumResponseItems``) fail the turn with
/// `execution_limit_exceeded`.
///
/// - Important: Consume a turn's events from one task. The turn is pull-based: the reading task itself
///   drives it (no task or queue of the backend's own), so the backend holds at most the events of one
///   stream event ahead of its reader, and while the reader pauses, nothing reads the network.
///   Cancelling the reading task, calling the turn's `interrupt`, or releasing the stream and its
///   iterator, ends the turn and closes its connection.
public final class CodexResponsesBackend: AgentBackend, AgentBackendModelDiscovering, AgentBackendRateLimitReporting,
    AgentBackendAuthenticating, AgentBackendStructuredRecoverySupporting, Sendable {
    /// The options the backend was created with.
    public let configuration: CodexResponsesBackendConfiguration
    /// The configured model: what the runtime uses for threads without their own model.
    public var defaultModel: CodexModel? { configuration.model }
    /// The configured base instructions (sent when no persona applies).
    public var baseInstructions: String? { configuration.instructions }
    private let client: ResponsesClient
    private let catalog: ModelCatalogClient
    let compactionClient: ResponsesCompactionClient
    private let authProvider: any AuthProvider
    /// Set when the backend was created without a provider: it then uses the runtime's.
    private let adopted: AdoptedAuthProvider?
    private let logSink: any AgentLogSink
    /// Runs structured recovery with this backend's endpoint, HTTP client and credentials.
    public let structuredRecoveryAdapter: AgentStructuredRecoveryAdapter

    /// Creates a backend.
    ///
    /// - Parameters:
    ///   - configuration: Endpoint, hosted features, budgets and queue size.
    ///   - httpClient: The HTTP seam. Default ``CodexTransport/DefaultHTTPClient`` (libcurl on Linux, URLSession on Apple platforms).
    ///   - authProvider: Supplies credentials (ChatGPT session or API key). `nil` (the default): the
    ///     backend uses the auth provider of the runtime it is given to (requests fail with
    ///     `not_signed_in` until then).
    ///   - clock: The clock retry waits use.
    ///   - wallClock: The date source for rate-limit resets and `Retry-After` dates.
    ///   - logSink: Receives log-safe events (never prompts, model output or credentials).
    public init(
        configuration: CodexResponsesBackendConfiguration = .init(),
        httpClient: any HTTPClient = DefaultHTTPClient(),
        authProvider: (any AuthProvider)? = nil,
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: any AgentWallClock = SystemWallClock(),
        logSink: any AgentLogSink = NoOpAgentLogSink()
    ) {
        self.configuration = configuration
        self.logSink = logSink
        let adopted = authProvider == nil ? AdoptedAuthProvider() : nil
        let provider: any AuthProvider = authProvider ?? adopted ?? AdoptedAuthProvider()
        self.adopted = adopted
        self.authProvider = provider
        let catalog = ModelCatalogClient(
            endpoint: configuration.endpoint, httpClient: httpClient, authProvider: provider, clientVersion: configuration.modelClientVersion,
            wallClock: wallClock
        )
        self.catalog = catalog
        compactionClient = ResponsesCompactionClient(endpoint: configuration.endpoint, httpClient: httpClient, authProvider: provider, wallClock: wallClock)
        var clientConfiguration = configuration.clientConfiguration
        clientConfiguration.modelsETagObserver = { etag, binding in catalog.noteModelsETag(etag, binding: binding) }
        client = ResponsesClient(
            configuration: clientConfiguration, httpClient: httpClient, authProvider: provider, clock: clock,
            wallClock: wallClock, logSink: logSink
        )
        structuredRecoveryAdapter = AgentStructuredRecoveryAdapter(
            recovery: AgentStructuredRecovery(
                configuration: .init(endpoint: configuration.endpoint, timeouts: configuration.clientConfiguration.timeouts),
                httpClient: httpClient, authProvider: provider, clock: clock, wallClock: wallClock, logSink: logSink
            ),
            enableReasoningSummaries: configuration.enableReasoningSummaries, baseInstructions: configuration.instructions
        )
    }

    /// Takes the runtime's auth provider when the backend was created without one; a backend with its
    /// own provider keeps it.
    /// - Throws: `invalid_configuration` when another runtime's provider was taken already.
    public func adoptAuthProvider(_ provider: any AuthProvider) throws {
        try adopted?.adopt(provider)
    }

    /// The latest snapshot per limit family that responses (error responses included) and
    /// `codex.rate_limits` events reported for the account signed in now, sorted by family; never a new
    /// request.
    public func rateLimits() async -> [AgentRateLimitSnapshot] {
        guard let binding = await authProvider.currentBinding() else { return [] }
        return client.rateLimits(for: binding)
    }

    /// The Codex `/models` catalog for the signed-in account under `policy`: cached per account for
    /// 300 s and revalidated with its ETag; `.preferCached` falls back to a stale cache or the bundled
    /// catalog for failures other than authentication, `.refresh` reports them, `.cachedOnly` sends
    /// nothing. A refresh also updates ``contextWindow(for:)``.
    public func listModels(policy: CodexModelRefreshPolicy) async throws -> CodexModelCatalogSnapshot {
        try await catalog.catalog(policy: policy)
    }

    /// The context window of `model` for the signed-in account: from its latest fetched catalog when
    /// that lists the model, else the bundled catalog's, else `nil` (an unknown model).
    public func contextWindow(for model: CodexModel) async -> Int? {
        if let binding = await authProvider.currentBinding(), let models = catalog.cachedModels(for: binding),
           let info = CodexModelCatalog(models: models).info(for: model) {
            return info.contextWindow
        }
        return CodexModelCatalog.bundled.info(for: model)?.contextWindow
    }

    /// Starts a turn: the first request is sent at once, in the background.
    ///
    /// - Parameter request: The turn: thread, history, user request, model, tools and contract.
    /// - Returns: The turn's events and controls. `submitToolResult` answers announced tool calls,
    ///   `interrupt` cancels the turn (the events then end with `CancellationError`), `waitUntilReady`
    ///   returns once the first response was accepted and throws when the first request failed before
    ///   any output. `steer` queues input for the turn's next request (see
    ///   ``AgentRuntime/steer(_:images:in:expectedTurnID:)``).
    /// - Throws: ``CodexCore/AgentRuntimeError`` `invalid_tool_definition` or `image_too_large` for an
    ///   unusable request, or `CancellationError` when the calling task is cancelled.
    public func startTurn(_ request: AgentBackendTurnRequest) async throws -> AgentTurnStream {
        try Task.checkCancellation()
        for tool in request.tools { try tool.validate() }
        for image in request.request.images { try image.validate() }
        guard request.request.images.count <= AgentImageAttachment.maximumPerMessage else {
            throw AgentRuntimeError(code: .tooManyImages, message: "a message may carry at most \(AgentImageAttachment.maximumPerMessage) images")
        }

        // Pull-based: the reader's task drives the turn (no task or queue of the backend's own).
        let runner = ResponsesTurnRunner(client: client, turn: request, configuration: configuration, logSink: logSink)
        let toolResults = runner.toolResults
        let steering = runner.steering
        return AgentTurnStream(
            events: AsyncThrowingStream { try await runner.next() },
            submitToolResult: { envelope in try toolResults.submit(envelope) },
            steer: { text, images in try steering.accept(text, images: images) },
            interrupt: { runner.interrupt() },
            waitUntilReady: { try await runner.waitUntilReady() }
        )
    }
}
