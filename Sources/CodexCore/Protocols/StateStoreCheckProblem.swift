/// One thing a state store's deep check found wrong: a table or column that is missing or unexpected, a
/// migration that is not recorded, or a row that cannot be decoded, disagrees with its key, or refers to
/// something missing. The SQLite and PostgreSQL stores' check reports list these.
public struct StateStoreCheckProblem: Sendable, Hashable, Codable {
    /// The table.
    public var table: String
    /// The row's key (a thread ID, `thread-id/position`, …), for row problems.
    public var rowKey: String?
    /// What is wrong (log-safe: never stored content).
    public var message: String

    /// Creates a problem.
    public init(table: String, rowKey: String? = nil, message: String) {
        self.table = table
        self.rowKey = rowKey
        self.message = message
    }
}
