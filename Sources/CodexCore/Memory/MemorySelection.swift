/// How one request uses the runtime's memory (``Request/memorySelection``).
///
/// ```swift
/// // The configured search, with the request's text as the query (the default).
/// let plain = Request(text: "When is my delivery?")
/// // Also look at this project's memories.
/// var scoped = Request(text: "Which database do we use?")
/// scoped.memorySelection = .append(scopes: [.project])
/// // No memory for this turn.
/// var quiet = Request(text: "Just answer this one.")
/// quiet.memorySelection = .disable
/// ```
public struct MemorySelection: Sendable, Hashable, Codable {
    /// How the request's filters combine with the configured ones.
    public enum Mode: String, Sendable, Hashable, Codable, CaseIterable {
        /// The configured scopes and tags.
        case inherit
        /// The configured scopes and tags plus these. A configured filter that is empty already admits
        /// every scope (or tag), so it stays empty.
        case append
        /// Only these scopes and tags (empty: any).
        case replace
        /// No retrieval or injection for this request.
        case disable
    }

    /// How the filters combine.
    public var mode: Mode
    /// Scopes for `.append` and `.replace`.
    public var scopes: [MemoryScope]
    /// Tags for `.append` and `.replace`.
    public var tags: [String]
    /// The query text; `nil` uses the request's text.
    public var text: String?
    /// Where the memories go for this request; `nil` uses the configured placement.
    public var instructionPlacement: MemoryInstructionPlacement?

    /// Creates a selection.
    public init(
        mode: Mode = .inherit, scopes: [MemoryScope] = [], tags: [String] = [], text: String? = nil,
        instructionPlacement: MemoryInstructionPlacement? = nil
    ) {
        self.mode = mode
        self.scopes = scopes
        self.tags = tags
        self.text = text
        self.instructionPlacement = instructionPlacement
    }

    /// The configured search with the request's text.
    public static let inherit = MemorySelection()
    /// No memory for this request.
    public static let disable = MemorySelection(mode: .disable)

    /// The configured filters plus `scopes` and `tags`.
    public static func append(scopes: [MemoryScope] = [], tags: [String] = []) -> MemorySelection {
        MemorySelection(mode: .append, scopes: scopes, tags: tags)
    }

    /// Only `scopes` and `tags`.
    public static func replace(scopes: [MemoryScope] = [], tags: [String] = []) -> MemorySelection {
        MemorySelection(mode: .replace, scopes: scopes, tags: tags)
    }

    /// The scope and tag filters of a search under this selection, given the configured ones; `nil` for
    /// `.disable`.
    public func filters(configuredScopes: [MemoryScope], configuredTags: [String]) -> (scopes: [MemoryScope], tags: [String])? {
        switch mode {
        case .disable: return nil
        case .inherit: return (configuredScopes, configuredTags)
        case .replace: return (Self.unique(scopes), Self.unique(tags))
        case .append:
            return (
                configuredScopes.isEmpty ? [] : Self.unique(configuredScopes + scopes),
                configuredTags.isEmpty ? [] : Self.unique(configuredTags + tags)
            )
        }
    }

    private static func unique<T: Hashable>(_ values: [T]) -> [T] {
        var seen = Set<T>()
        return values.filter { seen.insert($0).inserted }
    }
}
