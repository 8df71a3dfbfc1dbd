public import CodexCore

/// How the runtime treats an MCP tool. Each property left `nil` follows the server's hints:
/// - a tool hinted read-only runs in parallel with other parallel-safe calls, needs no approval and may
///   run again when a durable turn resumes;
/// - a tool that is not read-only needs approval when it is hinted destructive (the specification's
///   default for a tool without hints), and may run again on resume when it is hinted idempotent.
///
/// Hints come from the server: set the properties for a server you do not trust.
public struct MCPToolPolicy: Sendable, Hashable {
    /// Whether calls need approval.
    public var approvalPolicy: ToolApprovalPolicy?
    /// Whether calls may run together with other parallel-safe calls.
    public var supportsParallelExecution: Bool?
    /// Whether a call cut short by a crash may run again when its durable turn resumes.
    public var replaySafety: ToolReplaySafety?

    /// Creates a policy.
    public init(approvalPolicy: ToolApprovalPolicy? = nil, supportsParallelExecution: Bool? = nil, replaySafety: ToolReplaySafety? = nil) {
        self.approvalPolicy = approvalPolicy
        self.supportsParallelExecution = supportsParallelExecution
        self.replaySafety = replaySafety
    }

    /// Follows the server's hints in everything.
    public static let hints = MCPToolPolicy()

    /// This policy with `other`'s settings where it has them.
    func overridden(by other: MCPToolPolicy?) -> MCPToolPolicy {
        guard let other else { return self }
        return MCPToolPolicy(
            approvalPolicy: other.approvalPolicy ?? approvalPolicy, supportsParallelExecution: other.supportsParallelExecution ?? supportsParallelExecution,
            replaySafety: other.replaySafety ?? replaySafety
        )
    }
}
