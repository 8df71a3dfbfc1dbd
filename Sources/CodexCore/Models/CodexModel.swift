/// A model identifier (slug). Open: any slug is usable, known or not.
///
/// ```swift
/// let model: CodexModel = .gpt6Astra        // "gpt-6-astra"
/// let custom = CodexModel(rawValue: "gpt-7-preview")
/// ```
public struct CodexModel: OpenVocabulary, ExpressibleByStringLiteral {
    /// The slug sent as `model`.
    public let rawValue: String
    /// Wraps a slug.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Wraps a literal slug.
    public init(stringLiteral value: String) { rawValue = value }


    /// GPT-6 Astra: default effort low; efforts low … ultra; 272,000-token window.
    public static let gpt6Astra: CodexModel = "gpt-6-astra"
    /// GPT-6.1 Sol.
    public static let gpt61Sol: CodexModel = "gpt-6.1-sol"
    /// GPT-6 Sol.
    public static let gpt6Sol: CodexModel = "gpt-6-sol"
    /// GPT-6 Luna.
    public static let gpt6Luna: CodexModel = "gpt-6-luna"
    /// GPT-5.6 Sol (the default model).
    public static let gpt56Sol: CodexModel = "gpt-5.6-sol"
    /// GPT-5.6 Terra.
    public static let gpt56Terra: CodexModel = "gpt-5.6-terra"
    /// GPT-5.6 Luna.
    public static let gpt56Luna: CodexModel = "gpt-5.6-luna"
    /// GPT-5.5.
    public static let gpt55: CodexModel = "gpt-5.5"
    /// GPT-5.4.
    public static let gpt54: CodexModel = "gpt-5.4"
    /// GPT-5.4 mini.
    public static let gpt54Mini: CodexModel = "gpt-5.4-mini"
    /// GPT-5.3 Codex.
    public static let gpt53Codex: CodexModel = "gpt-5.3-codex"
    /// GPT-5.3 Codex Spark (text only, research preview, 128,000 tokens).
    public static let gpt53CodexSpark: CodexModel = "gpt-5.3-codex-spark"
    /// GPT-5.2.
    public static let gpt52: CodexModel = "gpt-5.2"

    /// The model used when nothing else is chosen.
    public static let `default`: CodexModel = .gpt56Sol
}

/// What the catalog knows about a model. Metadata only: it does not grant account access.
public struct CodexModelInfo: Sendable, Hashable, Codable {
    /// Input kinds a model accepts.
    public struct Modality: OpenVocabulary {
        /// The wire name.
        public let rawValue: String
        /// Creates a modality.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Text input.
        public static let text = Modality(rawValue: "text")
        /// Image input.
        public static let image = Modality(rawValue: "image")
    }

    /// The slug.
    public var model: CodexModel
    /// A display name.
    public var displayName: String
    /// A short description.
    public var description: String?
    /// The effort used when none is chosen.
    public var defaultReasoningEffort: ReasoningEffort
    /// The efforts the model accepts.
    public var supportedReasoningEfforts: [ReasoningEffort]
    /// Accepted input kinds.
    public var inputModalities: [Modality]
    /// The context window in tokens.
    public var contextWindow: Int
    /// Whether the model shows in pickers.
    public var isVisible: Bool
    /// Whether the model can run several tool calls per response.
    public var supportsParallelToolCalls: Bool
    /// Whether `input_image` may use `detail: "original"`.
    public var supportsImageDetailOriginal: Bool
    /// Whether reasoning summaries may be requested.
    public var supportsReasoningSummaries: Bool

    /// Creates model info.
    public init(
        model: CodexModel,
        displayName: String,
        description: String? = nil,
        defaultReasoningEffort: ReasoningEffort = .medium,
        supportedReasoningEfforts: [ReasoningEffort] = [.low, .medium, .high, .extraHigh],
        inputModalities: [Modality] = [.text, .image],
        contextWindow: Int = 272_000,
        isVisible: Bool = true,
        supportsParallelToolCalls: Bool = true,
        supportsImageDetailOriginal: Bool = true,
        supportsReasoningSummaries: Bool = true
    ) {
        self.model = model
        self.displayName = displayName
        self.description = description
        self.defaultReasoningEffort = defaultReasoningEffort
        self.supportedReasoningEfforts = supportedReasoningEfforts
        self.inputModalities = inputModalities
        self.contextWindow = contextWindow
        self.isVisible = isVisible
        self.supportsParallelToolCalls = supportsParallelToolCalls
        self.supportsImageDetailOriginal = supportsImageDetailOriginal
        self.supportsReasoningSummaries = supportsReasoningSummaries
    }

    /// The usable share of the window (95 %), in tokens.
    public var usableContextWindow: Int { contextWindow * 95 / 100 }

    /// Whether `effort` is accepted (custom efforts are assumed to be).
    public func supports(_ effort: ReasoningEffort) -> Bool {
        if case .custom = effort { return true }
        return supportedReasoningEfforts.contains(effort)
    }

    /// The effort to use: `requested` when supported, else the model's default.
    public func resolveEffort(_ requested: ReasoningEffort?) -> ReasoningEffort {
        guard let requested, supports(requested) else { return defaultReasoningEffort }
        return requested
    }
}
