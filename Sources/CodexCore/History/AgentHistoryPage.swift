/// Direction of a history page.
public enum AgentHistoryDirection: String, Sendable, Hashable, Codable {
    /// Oldest first.
    case forward
    /// Newest first.
    case backward
}

/// A query for one page of a thread's history.
public struct AgentHistoryQuery: Sendable, Hashable, Codable {
    /// The default page size.
    public static let defaultLimit = 256

    /// The most items to return.
    public var limit: Int
    /// Which way to page.
    public var direction: AgentHistoryDirection
    /// Where to continue from (a cursor from a previous page), or `nil` for the start.
    public var cursor: String?

    /// Creates a query.
    public init(limit: Int = Self.defaultLimit, direction: AgentHistoryDirection = .forward, cursor: String? = nil) {
        self.limit = limit
        self.direction = direction
        self.cursor = cursor
    }
}

/// One page of history.
public struct AgentHistoryPage: Sendable, Hashable, Codable {
    /// The items, in the query's direction.
    public var items: [AgentHistoryItem]
    /// The cursor for the next page, or `nil` at the end.
    public var nextCursor: String?

    /// Creates a page.
    public init(items: [AgentHistoryItem], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}
