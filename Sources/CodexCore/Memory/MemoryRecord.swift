public import Foundation

/// Identifies a ``MemoryRecord``; unique across a store, whatever the namespace.
public typealias MemoryRecordID = AgentIdentifier<AgentIdentifierKinds.MemoryRecord>

extension AgentIdentifierKinds {
    /// A memory record.
    public enum MemoryRecord: AgentIdentifierKind {}
}

/// The namespace a record lives in (an application, an account, a project): every query and every
/// dedupe key is confined to one namespace.
public struct MemoryNamespace: OpenVocabulary, ExpressibleByStringLiteral {
    /// The namespace text.
    public let rawValue: String
    /// Wraps a namespace.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Wraps a literal namespace.
    public init(stringLiteral value: String) { rawValue = value }
    /// The namespace used when none is given.
    public static let `default`: MemoryNamespace = "default"
}

/// Whom or what a record applies to, e.g. `user`, `project`, `thread:<id>`. Queries can be confined to
/// some scopes.
public struct MemoryScope: OpenVocabulary, ExpressibleByStringLiteral {
    /// The scope text.
    public let rawValue: String
    /// Wraps a scope.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Wraps a literal scope.
    public init(stringLiteral value: String) { rawValue = value }
    /// Applies everywhere.
    public static let global: MemoryScope = "global"
    /// About the user.
    public static let user: MemoryScope = "user"
    /// About the project or workspace.
    public static let project: MemoryScope = "project"
    /// About one thread: `thread:<id>`.
    public static func thread(_ id: AgentThreadID) -> MemoryScope { MemoryScope(rawValue: "thread:" + id.rawValue) }
}

/// What kind of knowledge a record holds.
public struct MemoryCategory: OpenVocabulary, ExpressibleByStringLiteral {
    /// The category text.
    public let rawValue: String
    /// Wraps a category.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Wraps a literal category.
    public init(stringLiteral value: String) { rawValue = value }
    /// A fact about the world or the user.
    public static let fact: MemoryCategory = "fact"
    /// A stated preference.
    public static let preference: MemoryCategory = "preference"
    /// A decision that was taken.
    public static let decision: MemoryCategory = "decision"
    /// A standing instruction.
    public static let instruction: MemoryCategory = "instruction"
    /// A summary of earlier work.
    public static let summary: MemoryCategory = "summary"
}

/// One remembered item: a short summary with its evidence, importance, tags and links.
///
/// ```swift
/// let record = MemoryRecord(
///     namespace: "shop", scope: .user, category: .preference,
///     summary: "Prefers delivery on Tuesdays.", tags: ["delivery"], dedupeKey: "delivery-day"
/// )
/// try record.validate()
/// ```
///
/// The limits are in ``MemoryLimits``; ``validate()`` checks them, and every store validates before it
/// writes.
public struct MemoryRecord: Sendable, Hashable, Codable {
    /// The record's identifier.
    public var id: MemoryRecordID
    /// The namespace it belongs to.
    public var namespace: MemoryNamespace
    /// Whom or what it applies to.
    public var scope: MemoryScope
    /// What kind of knowledge it is.
    public var category: MemoryCategory
    /// The remembered text (at most ``MemoryLimits/summaryBytes`` UTF-8 bytes, not empty); searched.
    public var summary: String
    /// Supporting excerpts (at most ``MemoryLimits/evidenceCount``); searched too.
    public var evidence: [String]
    /// How much it matters, ``MemoryLimits/importance`` (0 to 10); higher ranks first.
    public var importance: Int
    /// Labels queries can filter on (at most ``MemoryLimits/tagCount``, distinct).
    public var tags: [String]
    /// Other records this one relates to.
    public var relatedIDs: [MemoryRecordID]
    /// Free-form string attributes.
    public var attributes: [String: String]
    /// A key identifying what the record is about: an upsert with the key of an existing record of the
    /// same namespace replaces that record.
    public var dedupeKey: String?
    /// When the record stops being returned by default; `nil` for never.
    public var expiresAt: Date?
    /// Whether the record is archived (kept, but not returned by default).
    public var isArchived: Bool
    /// When it was first stored.
    public var createdAt: Date
    /// When it last changed.
    public var updatedAt: Date

    /// Creates a record; `updatedAt` defaults to `createdAt`.
    public init(
        id: MemoryRecordID = MemoryRecordID(), namespace: MemoryNamespace = .default, scope: MemoryScope = .global,
        category: MemoryCategory = .fact, summary: String, evidence: [String] = [], importance: Int = 5, tags: [String] = [],
        relatedIDs: [MemoryRecordID] = [], attributes: [String: String] = [:], dedupeKey: String? = nil, expiresAt: Date? = nil,
        isArchived: Bool = false, createdAt: Date = Date(), updatedAt: Date? = nil
    ) {
        self.id = id
        self.namespace = namespace
        self.scope = scope
        self.category = category
        self.summary = summary
        self.evidence = evidence
        self.importance = importance
        self.tags = tags
        self.relatedIDs = relatedIDs
        self.attributes = attributes
        self.dedupeKey = dedupeKey
        self.expiresAt = expiresAt
        self.isArchived = isArchived
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }

    /// Whether the record has expired at `date` (its expiry is at or before it).
    public func isExpired(at date: Date) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt <= date
    }
}
