/// The model and reasoning effort a turn runs with.
///
/// ```swift
/// var request = Request(text: "Summarise.")
/// request.modelOverride = CodexModelConfiguration(model: .gpt6Astra, reasoningEffort: .high)
/// ```
public struct CodexModelConfiguration: Sendable, Hashable, Codable {
    /// The model.
    public var model: CodexModel
    /// The effort, or `nil` for the model's default.
    public var reasoningEffort: ReasoningEffort?

    /// Creates a configuration.
    public init(model: CodexModel, reasoningEffort: ReasoningEffort? = nil) {
        self.model = model
        self.reasoningEffort = reasoningEffort
    }
}

/// What a request needs of its model, for selectors that choose among candidates.
public struct AgentModelRequirements: Sendable, Hashable, Codable {
    /// The smallest context window acceptable, in tokens (`nil`: any).
    public var minimumContextWindowTokenCount: Int?

    /// Creates requirements.
    public init(minimumContextWindowTokenCount: Int? = nil) {
        self.minimumContextWindowTokenCount = minimumContextWindowTokenCount
    }
}
