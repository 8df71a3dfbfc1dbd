public import Foundation

/// An approval a durable turn asked for, as the state store keeps it: answerable after a restart and
/// from another process, bound to the digest of the tool's definition and the call's arguments.
public struct StoredApproval: Sendable, Hashable, Codable, Identifiable {
    /// The request.
    public var request: AgentApprovalRequest
    /// ``ToolDefinition/approvalDigest(arguments:)`` of the tool and the call when it was asked.
    public var digest: String
    /// When it was asked.
    public var requestedAt: Date
    /// The answer, once given.
    public var decision: AgentApprovalDecision?
    /// When it was answered.
    public var answeredAt: Date?

    /// The request's ID.
    public var id: AgentApprovalID { request.id }
    /// Whether it still waits for an answer.
    public var isPending: Bool { decision == nil }

    /// Creates a record.
    public init(request: AgentApprovalRequest, digest: String, requestedAt: Date, decision: AgentApprovalDecision? = nil, answeredAt: Date? = nil) {
        self.request = request
        self.digest = digest
        self.requestedAt = requestedAt
        self.decision = decision
        self.answeredAt = answeredAt
    }
}
