public import CodexCore
public import CodexTransport
public import Foundation

/// Options of the built-in Responses backend: where it sends turns, which hosted features it asks for,
/// and the budgets that bound one turn.
///
/// ```swift
/// let configuration = CodexResponsesBackendConfiguration(
///     model: .gpt6Astra,
///     enableImageGeneration: true,
///     enableReasoningSummaries: true
/// )
/// ```
///
/// The budgets are per turn and independent of the runtime's own `AgentTurnLimits`: a turn that would
/// need more model passes, response bytes or output items fails with `execution_limit_exceeded` and
/// ``CodexCore/AgentRuntimeError/executionLimit`` set to `.modelPasses`, `.responseBytes` or
/// `.responseItems`. Budget failures are never retried. Negative budgets count as zero.
public struct CodexResponsesBackendConfiguration: Sendable {
    /// The default ``maximumResponseBytes``: 256 MiB.
    public static let defaultMaximumResponseBytes = 256 * 1024 * 1024
    /// The bounds of ``maximumBufferedEvents``.
    public static let bufferedEventsRange: ClosedRange<Int> = 1...4096

    /// The model a host uses when a thread chooses none. Each turn sends the model of its
    /// ``CodexCore/AgentBackendTurnRequest``.
    public var model: CodexModel
    /// Where requests go. Default: the ChatGPT/Codex backend.
    public var endpoint: ResponsesEndpoint
    /// Whether to offer the hosted `image_generation` tool. Generated images become assistant
    /// messages with an ``CodexCore/AgentImageAttachment``. Default `false`.
    public var enableImageGeneration: Bool
    /// The `output_format` requested from the image generation tool. Default `png`.
    public var imageGenerationOutputFormat: String
    /// Whether to ask for provider reasoning summaries (`reasoning.summary = "auto"`). Default `false`.
    public var enableReasoningSummaries: Bool
    /// The most model requests one turn may make (each pass after tool results is one; transient
    /// retries share their pass). Default 32.
    public var maximumModelPasses: Int
    /// The most response bytes one turn may receive, SSE framing included, over all passes and retried
    /// attempts. Default 256 MiB. Checked after each event, so one event (at most ~70 MB) may cross it.
    public var maximumResponseBytes: Int
    /// The most output items one turn may receive over all passes. Default 2,048.
    public var maximumResponseItems: Int
    /// The most events the backend may hold ahead of its reader: default 64, clamped to 1…4,096. The
    /// built-in backend is pull-based and holds only the events of the one stream event it is mapping
    /// (a handful), so any value in range is met; when the reader pauses, the backend reads nothing.
    public var maximumBufferedEvents: Int
    /// The longest gap between body chunks of a response before it times out, in seconds (the HTTP idle
    /// timeout, also set on the URL request). Default 300.
    public var streamIdleTimeout: TimeInterval
    /// The ordinary retry policy (same POST, only before any output). Default ``CodexTransport/RetryPolicy/default``.
    public var retryPolicy: RetryPolicy
    /// Base instructions used when a turn request's `instructions` is empty.
    public var instructions: String?
    /// The `client_version` of model discovery (`GET {base}/models`): the server compatibility version to
    /// ask for. Default `0.153.0`.
    public var modelClientVersion: String

    /// Creates a configuration; every option has a default.
    ///
    /// - Parameters:
    ///   - model: The host's default model.
    ///   - endpoint: Where requests go.
    ///   - enableImageGeneration: Offer the hosted image generation tool.
    ///   - imageGenerationOutputFormat: The generated images' format.
    ///   - enableReasoningSummaries: Ask for reasoning summaries.
    ///   - maximumModelPasses: Model requests per turn.
    ///   - maximumResponseBytes: Response bytes per turn.
    ///   - maximumResponseItems: Output items per turn.
    ///   - maximumBufferedEvents: The most events held ahead of the reader (clamped to 1…4,096).
    ///   - streamIdleTimeout: The stream idle timeout in seconds.
    ///   - retryPolicy: The retry policy.
    ///   - instructions: Base instructions for turns that bring none.
    ///   - modelClientVersion: The model discovery's `client_version`.
    public init(
        model: CodexModel = .default,
        endpoint: ResponsesEndpoint = .chatGPT,
        enableImageGeneration: Bool = false,
        imageGenerationOutputFormat: String = "png",
        enableReasoningSummaries: Bool = false,
        maximumModelPasses: Int = 32,
        maximumResponseBytes: Int = CodexResponsesBackendConfiguration.defaultMaximumResponseBytes,
        maximumResponseItems: Int = 2048,
        maximumBufferedEvents: Int = 64,
        streamIdleTimeout: TimeInterval = 300,
        retryPolicy: RetryPolicy = .default,
        instructions: String? = nil,
        modelClientVersion: String = ModelCatalogClient.defaultClientVersion
    ) {
        self.model = model
        self.endpoint = endpoint
        self.enableImageGeneration = enableImageGeneration
        self.imageGenerationOutputFormat = imageGenerationOutputFormat
        self.enableReasoningSummaries = enableReasoningSummaries
        self.maximumModelPasses = maximumModelPasses
        self.maximumResponseBytes = maximumResponseBytes
        self.maximumResponseItems = maximumResponseItems
        self.maximumBufferedEvents = maximumBufferedEvents
        self.streamIdleTimeout = streamIdleTimeout
        self.retryPolicy = retryPolicy
        self.instructions = instructions
        self.modelClientVersion = modelClientVersion
    }

    /// ``maximumBufferedEvents`` clamped to 1…4,096.
    var effectiveBufferedEvents: Int {
        min(max(maximumBufferedEvents, Self.bufferedEventsRange.lowerBound), Self.bufferedEventsRange.upperBound)
    }

    /// The three budgets with negatives counted as zero.
    var budgets: (passes: Int, bytes: Int, items: Int) {
        (max(0, maximumModelPasses), max(0, maximumResponseBytes), max(0, maximumResponseItems))
    }

    /// ``streamIdleTimeout`` as a duration: non-finite or non-positive values fall back to 300 s, and
    /// the value is capped at one day.
    var idleTimeout: Duration {
        guard streamIdleTimeout.isFinite, streamIdleTimeout > 0 else { return .seconds(300) }
        let milliseconds = min(streamIdleTimeout, 86_400) * 1000
        return .milliseconds(Int64(milliseconds.rounded(.up)))
    }

    /// The transport configuration these options describe.
    var clientConfiguration: ResponsesClient.Configuration {
        ResponsesClient.Configuration(endpoint: endpoint, timeouts: HTTPTimeouts(idle: idleTimeout), retryPolicy: retryPolicy)
    }
}
