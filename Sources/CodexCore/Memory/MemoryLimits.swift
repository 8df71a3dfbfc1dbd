/// The limits every ``MemoryRecord`` and ``MemoryQuery`` is held to. Sizes are UTF-8 bytes.
public enum MemoryLimits {
    /// The longest summary: 16 KiB.
    public static let summaryBytes = 16 * 1024
    /// The most evidence strings.
    public static let evidenceCount = 32
    /// The longest evidence string: 4 KiB.
    public static let evidenceBytes = 4 * 1024
    /// The most tags.
    public static let tagCount = 64
    /// The longest tag.
    public static let tagBytes = 128
    /// The most related IDs.
    public static let relatedCount = 64
    /// The most attributes.
    public static let attributeCount = 64
    /// The longest attribute key.
    public static let attributeKeyBytes = 128
    /// The longest attribute value.
    public static let attributeValueBytes = 4 * 1024
    /// The longest ID, namespace, scope, category or dedupe key.
    public static let keyBytes = 256
    /// The importance range.
    public static let importance = 0...10
    /// The most results a query may consider.
    public static let resultCount = 256
    /// The most tokens in a query's text.
    public static let queryTokens = 256
    /// The most records a list may return.
    public static let listCount = 10_000
}

/// Which limit a record or query broke, named in ``MemoryStoreError/limit``.
public struct MemoryLimit: OpenVocabulary, ExpressibleByStringLiteral {
    /// The limit's name.
    public let rawValue: String
    /// Wraps a name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Wraps a literal name.
    public init(stringLiteral value: String) { rawValue = value }

    /// The summary is empty.
    public static let summaryEmpty: MemoryLimit = "summary_empty"
    /// The summary is longer than ``MemoryLimits/summaryBytes``.
    public static let summaryBytes: MemoryLimit = "summary_bytes"
    /// More than ``MemoryLimits/evidenceCount`` evidence strings.
    public static let evidenceCount: MemoryLimit = "evidence_count"
    /// An evidence string is longer than ``MemoryLimits/evidenceBytes``.
    public static let evidenceBytes: MemoryLimit = "evidence_bytes"
    /// More than ``MemoryLimits/tagCount`` tags.
    public static let tagCount: MemoryLimit = "tag_count"
    /// A tag is empty or longer than ``MemoryLimits/tagBytes``.
    public static let tagBytes: MemoryLimit = "tag_bytes"
    /// A tag appears twice.
    public static let tagDuplicate: MemoryLimit = "tag_duplicate"
    /// More than ``MemoryLimits/relatedCount`` related IDs.
    public static let relatedCount: MemoryLimit = "related_count"
    /// More than ``MemoryLimits/attributeCount`` attributes.
    public static let attributeCount: MemoryLimit = "attribute_count"
    /// An attribute key is empty or too long, or a value is too long.
    public static let attributeBytes: MemoryLimit = "attribute_bytes"
    /// The ID is empty or too long.
    public static let idBytes: MemoryLimit = "id_bytes"
    /// The namespace is empty or too long.
    public static let namespaceBytes: MemoryLimit = "namespace_bytes"
    /// The scope is empty or too long.
    public static let scopeBytes: MemoryLimit = "scope_bytes"
    /// The category is empty or too long.
    public static let categoryBytes: MemoryLimit = "category_bytes"
    /// The dedupe key is empty or too long.
    public static let dedupeKeyBytes: MemoryLimit = "dedupe_key_bytes"
    /// The importance is outside ``MemoryLimits/importance``.
    public static let importance: MemoryLimit = "importance"
    /// The update date is before the creation date.
    public static let dates: MemoryLimit = "dates"
    /// A query's result limit is outside 1 to ``MemoryLimits/resultCount``.
    public static let resultCount: MemoryLimit = "result_count"
    /// A query's text has more than ``MemoryLimits/queryTokens`` tokens.
    public static let queryTokens: MemoryLimit = "query_tokens"
    /// A query's `atLeast` count is below 1.
    public static let matchCount: MemoryLimit = "match_count"
    /// A read budget is negative or zero.
    public static let budget: MemoryLimit = "budget"
    /// A list's limit is outside 1 to ``MemoryLimits/listCount``.
    public static let listCount: MemoryLimit = "list_count"
}
