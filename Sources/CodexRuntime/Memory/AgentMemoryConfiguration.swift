public import CodexCore

/// The runtime's memory: which store and namespace turns search, how results are ranked and
/// budgeted, where they go in the instructions, and whether completed turns are captured.
///
/// ```swift
/// let memory = AgentMemoryConfiguration(
///     store: try SQLiteMemoryStore(path: memoryPath), namespace: "shop",
///     scopes: [.user], instructionPlacement: .afterSkills,
///     automaticCapture: .afterCompletedTurns(scope: .user)
/// )
/// let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: store, memory: memory))
/// ```
///
/// Every turn (ephemeral ones too) searches the store with the request's text, unless its
/// ``CodexCore/Request/memorySelection`` says otherwise, and the records found within the read budget
/// are rendered into the instructions. Only completed persistent turns are captured.
public struct AgentMemoryConfiguration: Sendable {
    /// Where memories are read and written.
    public var store: any MemoryStoring
    /// The namespace searched and written.
    public var namespace: MemoryNamespace
    /// The scopes searched (empty: any scope).
    public var scopes: [MemoryScope]
    /// The tags searched (empty: any tag).
    public var tags: [String]
    /// How many of the query's tokens a record must contain: default any one.
    public var match: MemoryQuery.MatchPolicy
    /// The order of the records: default importance, then relevance, then recency.
    public var ranking: MemoryQuery.Ranking
    /// How much a turn's instructions may carry: default 8 records and 1,600 characters.
    public var budget: MemoryReadBudget
    /// Where the memories go: default after the skills' instructions.
    public var instructionPlacement: MemoryInstructionPlacement
    /// Renders the records found into the instructions' memory section.
    public var renderer: AgentMemoryRenderer
    /// Whether completed persistent turns are captured into the store: default not.
    public var automaticCapture: AgentMemoryCapturePolicy

    /// Creates a configuration.
    public init(
        store: any MemoryStoring, namespace: MemoryNamespace = .default, scopes: [MemoryScope] = [], tags: [String] = [],
        match: MemoryQuery.MatchPolicy = .anyToken, ranking: MemoryQuery.Ranking = .importanceThenRecency,
        budget: MemoryReadBudget = .default, instructionPlacement: MemoryInstructionPlacement = .afterSkills,
        renderer: AgentMemoryRenderer = .default, automaticCapture: AgentMemoryCapturePolicy = .disabled
    ) {
        self.store = store
        self.namespace = namespace
        self.scopes = scopes
        self.tags = tags
        self.match = match
        self.ranking = ranking
        self.budget = budget
        self.instructionPlacement = instructionPlacement
        self.renderer = renderer
        self.automaticCapture = automaticCapture
    }
}

/// Turns the records a search returned into the text of the instructions' memory section.
public struct AgentMemoryRenderer: Sendable {
    /// The rendering; an empty result injects nothing.
    public let render: @Sendable ([MemoryRecord]) -> String

    /// Creates a renderer.
    public init(_ render: @escaping @Sendable ([MemoryRecord]) -> String) {
        self.render = render
    }

    /// A `Memory` heading, one line saying how to use it, then one `- (category) summary` line per
    /// record, best first (a summary's further lines indented under it).
    public static let `default` = AgentMemoryRenderer { records in
        var lines = [
            "Memory",
            "Known from earlier conversations, most relevant first. Use it where it helps; the user's current message takes precedence.",
        ]
        for record in records {
            let summary = record.summary.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n  ")
            lines.append("- (\(record.category.rawValue)) \(summary)")
        }
        return lines.joined(separator: "\n")
    }
}

/// Whether and how completed persistent turns are captured as memories.
///
/// Capture is one extra structured request after the turn has been committed: the turn's user text
/// and final reply go to the model with a fixed instruction and a fixed JSON contract, the reply is
/// validated like any structured output, and each memory it names is upserted with its key as the
/// dedupe key (so a fact captured again replaces the earlier record). It runs in the background: the
/// turn's stream and `send` do not wait for it (``AgentRuntime/waitForMemoryCaptures()`` does).
public struct AgentMemoryCapturePolicy: Sendable, Hashable {
    /// Whether completed persistent turns are captured.
    public var isEnabled: Bool
    /// The scope captured records get.
    public var scope: MemoryScope
    /// The most memories one capture may store (1 to 32): default 4.
    public var maximumMemories: Int
    /// The model of the capture request; `nil` uses the turn's model.
    public var model: CodexModel?

    /// Creates a policy.
    public init(isEnabled: Bool, scope: MemoryScope = .user, maximumMemories: Int = 4, model: CodexModel? = nil) {
        self.isEnabled = isEnabled
        self.scope = scope
        self.maximumMemories = maximumMemories
        self.model = model
    }

    /// No automatic capture (``AgentRuntime/captureMemories(from:for:)`` still works).
    public static let disabled = AgentMemoryCapturePolicy(isEnabled: false)

    /// Capture after every completed persistent turn.
    public static func afterCompletedTurns(scope: MemoryScope = .user, maximumMemories: Int = 4, model: CodexModel? = nil) -> AgentMemoryCapturePolicy {
        AgentMemoryCapturePolicy(isEnabled: true, scope: scope, maximumMemories: maximumMemories, model: model)
    }

    /// The most memories a capture accepts.
    public static let memoryLimit = 32
}
