/// A request for the host to approve one tool call.
public struct AgentApprovalRequest: Sendable, Hashable, Codable, Identifiable {
    /// The request's identifier.
    public var id: AgentApprovalID
    /// The thread.
    public var threadID: AgentThreadID
    /// The turn.
    public var turnID: AgentTurnID
    /// The call awaiting approval.
    public var toolInvocation: ToolInvocation
    /// A short title for the prompt.
    public var title: String
    /// The tool's approval message, if any.
    public var message: String?

    /// Creates a request.
    public init(
        id: AgentApprovalID = AgentApprovalID(), threadID: AgentThreadID, turnID: AgentTurnID, toolInvocation: ToolInvocation,
        title: String, message: String? = nil
    ) {
        self.id = id
        self.threadID = threadID
        self.turnID = turnID
        self.toolInvocation = toolInvocation
        self.title = title
        self.message = message
    }
}

/// The host's decision on a tool call.
public enum AgentApprovalDecision: String, Sendable, Hashable, Codable {
    /// Run the tool.
    case approved
    /// Do not run it; the model receives a denied result.
    case denied
}

/// A decided approval request.
public struct AgentApprovalResolution: Sendable, Hashable, Codable {
    /// The request decided.
    public var requestID: AgentApprovalID
    /// The decision.
    public var decision: AgentApprovalDecision

    /// Creates a resolution.
    public init(requestID: AgentApprovalID, decision: AgentApprovalDecision) {
        self.requestID = requestID
        self.decision = decision
    }
}

/// Presents approval requests to a person. Implementations must honour task cancellation: an
/// interrupted turn cancels a pending presentation.
public protocol AgentApprovalPresenting: Sendable {
    /// Asks for a decision.
    func requestApproval(_ request: AgentApprovalRequest) async throws -> AgentApprovalDecision
}
