public import CodexCore
public import CodexTransport
import Synchronization

/// A host's model policy: picks the model and effort of a turn while the runtime prepares it, before
/// anything model-dependent happens.
///
/// ```swift
/// struct PurposeSelector: CodexModelSelecting {
///     func selectModel(in context: CodexModelSelectionContext) async throws -> CodexModelSelection {
///         let model: CodexModel = context.purpose == "news-summary" ? .gpt6Luna : .gpt6Astra
///         return CodexModelSelection(configuration: CodexModelConfiguration(model: model), policyID: "purpose-v1")
///     }
/// }
/// let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: store, modelSelector: PurposeSelector()))
/// ```
///
/// Precedence for each turn: the request's ``CodexCore/Request/modelOverride``, then the backend's own
/// preparation (``AgentBackendRequestPreparing``) or this selector, then the thread's model, then the
/// backend's default. A selection runs exactly once per turn; a thrown error fails the turn before
/// anything is stored or sent.
public protocol CodexModelSelecting: Sendable {
    /// The model and effort for the turn described by `context`.
    func selectModel(in context: CodexModelSelectionContext) async throws -> CodexModelSelection
}

/// A selector's answer.
public struct CodexModelSelection: Sendable, Hashable {
    /// The model and effort.
    public var configuration: CodexModelConfiguration
    /// Names the host policy that chose it (logged with `model.selected`).
    public var policyID: String?

    /// Creates a selection.
    public init(configuration: CodexModelConfiguration, policyID: String? = nil) {
        self.configuration = configuration
        self.policyID = policyID
    }
}

/// What a selector knows about the turn it chooses for.
public struct CodexModelSelectionContext: Sendable {
    /// The thread.
    public let threadID: AgentThreadID
    /// The request's ``CodexCore/Request/selectionPurpose``.
    public let purpose: String?
    /// The structured response format, when the turn has one.
    public let responseFormat: AgentStructuredOutputFormat?
    /// What the turn would use without a selector: the thread's model and effort, else the backend's
    /// default model.
    public let baseline: CodexModelConfiguration
    /// The request's ``CodexCore/Request/modelRequirements``.
    public let requirements: AgentModelRequirements?
    /// Whether the request carries images (the model must take image input).
    public let needsImageInput: Bool
    let catalog: CatalogLoader

    /// The account's model catalog, fetched at most once per policy for this selection.
    public func models(policy: CodexModelRefreshPolicy = .preferCached) async throws -> CodexModelCatalogSnapshot {
        try await catalog.load(policy)
    }

    /// Whether `catalog` lists `configuration`'s model with its effort (or with none), with image input
    /// when the request has images, and with at least the required context window.
    public func supports(_ configuration: CodexModelConfiguration, in catalog: CodexModelCatalogSnapshot) -> Bool {
        guard let info = CodexModelCatalog(models: catalog.models).info(for: configuration.model) else { return false }
        if let effort = configuration.reasoningEffort, !info.supports(effort) { return false }
        if needsImageInput, !info.inputModalities.contains(.image) { return false }
        if let minimum = requirements?.minimumContextWindowTokenCount, info.contextWindow < minimum { return false }
        return true
    }
}

/// Loads the catalog lazily, once per policy.
final class CatalogLoader: Sendable {
    private let load: @Sendable (CodexModelRefreshPolicy) async throws -> CodexModelCatalogSnapshot
    private let loaded = Mutex<[CodexModelRefreshPolicy: CodexModelCatalogSnapshot]>([:])

    init(_ load: @escaping @Sendable (CodexModelRefreshPolicy) async throws -> CodexModelCatalogSnapshot) {
        self.load = load
    }

    func load(_ policy: CodexModelRefreshPolicy) async throws -> CodexModelCatalogSnapshot {
        if let snapshot = loaded.withLock({ $0[policy] }) { return snapshot }
        let snapshot = try await load(policy)
        loaded.withLock { $0[policy] = snapshot }
        return snapshot
    }
}

/// Always the same model and effort.
public struct FixedCodexModelSelector: CodexModelSelecting {
    /// The configuration every turn gets.
    public var configuration: CodexModelConfiguration

    /// Creates a fixed selector.
    public init(_ configuration: CodexModelConfiguration) {
        self.configuration = configuration
    }

    /// Returns the fixed configuration (policy ID `fixed`).
    public func selectModel(in context: CodexModelSelectionContext) async throws -> CodexModelSelection {
        CodexModelSelection(configuration: configuration, policyID: "fixed")
    }
}

/// The first candidate the account's catalog supports (its effort, image input when the request has
/// images, the required context window), tried in order. There is no hidden fallback: when none fits,
/// the turn fails with `model_unavailable`.
///
/// ```swift
/// let selector = PreferredAvailableCodexModelSelector(candidates: [
///     CodexModelConfiguration(model: .gpt6Astra, reasoningEffort: .high),
///     CodexModelConfiguration(model: .gpt6Sol),
/// ])
/// ```
public struct PreferredAvailableCodexModelSelector: CodexModelSelecting {
    /// The candidates, most preferred first.
    public var candidates: [CodexModelConfiguration]
    /// How the catalog is read. Default `.preferCached`.
    public var refreshPolicy: CodexModelRefreshPolicy
    /// Whether a stale cached catalog may decide. Default `true`; `false` refreshes a stale one first.
    public var allowsStaleCatalog: Bool

    /// Creates the selector.
    public init(candidates: [CodexModelConfiguration], refreshPolicy: CodexModelRefreshPolicy = .preferCached, allowsStaleCatalog: Bool = true) {
        self.candidates = candidates
        self.refreshPolicy = refreshPolicy
        self.allowsStaleCatalog = allowsStaleCatalog
    }

    /// The first supported candidate.
    /// - Throws: ``CodexCore/AgentRuntimeError`` `model_unavailable` when none is supported, and the
    ///   catalog's errors.
    public func selectModel(in context: CodexModelSelectionContext) async throws -> CodexModelSelection {
        var catalog = try await context.models(policy: refreshPolicy)
        if catalog.isStale, !allowsStaleCatalog { catalog = try await context.models(policy: .refresh) }
        guard let chosen = candidates.first(where: { context.supports($0, in: catalog) }) else {
            throw AgentRuntimeError(code: .modelUnavailable, message: "none of the \(candidates.count) preferred models is available to this account")
        }
        return CodexModelSelection(configuration: chosen, policyID: "preferred-available")
    }
}

/// A backend that prepares its turns' model selection itself (a wrapper backend applying its host's
/// policy). When the runtime's backend conforms, its answer takes the place of the runtime's
/// ``AgentRuntime/Configuration/modelSelector``; a request's ``CodexCore/Request/modelOverride`` still
/// comes first.
public protocol AgentBackendRequestPreparing: AgentBackend {
    /// The model and effort for the turn, or `nil` to fall back to the thread's model and the backend's
    /// default.
    func prepareModelSelection(in context: CodexModelSelectionContext) async throws -> CodexModelSelection?
}
