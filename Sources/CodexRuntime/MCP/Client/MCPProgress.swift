/// A progress notification of an MCP tool call (`notifications/progress`).
public struct MCPProgress: Sendable, Hashable {
    /// Progress so far (increases with every notification; the unit is the server's).
    public var progress: Double
    /// The total, when the server knows it.
    public var total: Double?
    /// A line describing the step, when the server gave one.
    public var message: String?

    /// Creates a progress value.
    public init(progress: Double, total: Double? = nil, message: String? = nil) {
        self.progress = progress
        self.total = total
        self.message = message
    }
}
