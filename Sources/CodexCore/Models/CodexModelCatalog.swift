/// A list of known models with the lookup rules of the Codex catalog.
///
/// ```swift
/// let astra = CodexModelCatalog.bundled.info(for: .gpt6Astra)
/// astra?.defaultReasoningEffort   // .low
/// CodexModelCatalog.bundled.info(for: "gpt-5.4-2026-09-01")?.model // gpt-5.4 (longest prefix)
/// ```
public struct CodexModelCatalog: Sendable, Hashable, Codable {
    /// The models, in display order.
    public var models: [CodexModelInfo]

    /// Creates a catalog.
    public init(models: [CodexModelInfo]) {
        self.models = models
    }

    /// The models to show in a picker.
    public var visibleModels: [CodexModelInfo] { models.filter(\.isVisible) }

    /// The entry for `model`: an exact slug, else the longest catalog slug that prefixes it, also after
    /// dropping a `namespace/` prefix. `nil` when nothing matches (the slug stays usable).
    public func info(for model: CodexModel) -> CodexModelInfo? {
        let candidates = [model.rawValue] + (model.rawValue.split(separator: "/", maxSplits: 1).count == 2
            ? [String(model.rawValue.split(separator: "/", maxSplits: 1)[1])] : [])
        for slug in candidates {
            if let exact = models.first(where: { $0.model.rawValue == slug }) { return exact }
        }
        for slug in candidates {
            let prefixed = models.filter { slug.hasPrefix($0.model.rawValue) }
            if let longest = prefixed.max(by: { $0.model.rawValue.count < $1.model.rawValue.count }) { return longest }
        }
        return nil
    }

    /// The catalog that ships with CodexKit.
    public static let bundled = CodexModelCatalog(models: [
        CodexModelInfo(
            model: .gpt6Astra, displayName: "GPT-6 Astra", description: "Fast frontier model.",
            defaultReasoningEffort: .low, supportedReasoningEfforts: [.low, .medium, .high, .extraHigh, .max, .ultra]
        ),
        CodexModelInfo(
            model: .gpt61Sol, displayName: "GPT-6.1 Sol",
            supportedReasoningEfforts: [.low, .medium, .high, .extraHigh, .max, .ultra]
        ),
        CodexModelInfo(model: .gpt6Sol, displayName: "GPT-6 Sol", supportedReasoningEfforts: [.low, .medium, .high, .extraHigh, .max, .ultra]),
        CodexModelInfo(model: .gpt6Luna, displayName: "GPT-6 Luna"),
        CodexModelInfo(model: .gpt56Sol, displayName: "GPT-5.6 Sol"),
        CodexModelInfo(model: .gpt56Terra, displayName: "GPT-5.6 Terra"),
        CodexModelInfo(model: .gpt56Luna, displayName: "GPT-5.6 Luna"),
        CodexModelInfo(model: .gpt55, displayName: "GPT-5.5"),
        CodexModelInfo(model: .gpt54, displayName: "GPT-5.4"),
        CodexModelInfo(model: .gpt54Mini, displayName: "GPT-5.4 mini"),
        CodexModelInfo(model: .gpt53Codex, displayName: "GPT-5.3 Codex"),
        CodexModelInfo(
            model: .gpt53CodexSpark, displayName: "GPT-5.3 Codex Spark", description: "Research preview, text only.",
            inputModalities: [.text], contextWindow: 128_000, supportsImageDetailOriginal: false
        ),
        CodexModelInfo(model: .gpt52, displayName: "GPT-5.2", supportsImageDetailOriginal: false),
    ])
}
