import Foundation

/// Marks what an ``AgentIdentifier`` identifies, so a thread ID cannot be passed where a turn ID is expected.
public protocol AgentIdentifierKind: Sendable {}

/// A typed, string-backed identifier, encoded as a plain JSON string.
///
/// ```swift
/// let thread = AgentThreadID()            // a new random UUID string
/// let restored = AgentThreadID(rawValue: "3F2504E0-4F89-11D3-9A0C-0305E82C3301")
/// ```
public struct AgentIdentifier<Kind: AgentIdentifierKind>: RawRepresentable, Sendable, Hashable, Comparable, Codable,
    CustomStringConvertible, ExpressibleByStringLiteral
{
    /// The identifier text.
    public let rawValue: String

    /// Wraps an existing identifier.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A new random identifier (a lowercase UUID).
    public init() { rawValue = UUID().uuidString.lowercased() }

    /// Wraps a literal identifier.
    public init(stringLiteral value: String) { rawValue = value }

    /// The identifier text.
    public var description: String { rawValue }

    /// Orders by the identifier text.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Identifier kinds.
public enum AgentIdentifierKinds {
    /// A conversation thread.
    public enum Thread: AgentIdentifierKind {}
    /// One turn within a thread.
    public enum Turn: AgentIdentifierKind {}
    /// A message.
    public enum Message: AgentIdentifierKind {}
    /// An image attachment.
    public enum Attachment: AgentIdentifierKind {}
    /// A tool call (the provider's `call_id`).
    public enum ToolInvocation: AgentIdentifierKind {}
    /// An approval request.
    public enum Approval: AgentIdentifierKind {}
    /// A history item.
    public enum HistoryItem: AgentIdentifierKind {}
}

/// Identifies a thread.
public typealias AgentThreadID = AgentIdentifier<AgentIdentifierKinds.Thread>
/// Identifies a turn.
public typealias AgentTurnID = AgentIdentifier<AgentIdentifierKinds.Turn>
/// Identifies a message.
public typealias AgentMessageID = AgentIdentifier<AgentIdentifierKinds.Message>
/// Identifies an image attachment.
public typealias AgentAttachmentID = AgentIdentifier<AgentIdentifierKinds.Attachment>
/// Identifies a tool call; the value is the provider's `call_id`.
public typealias ToolInvocationID = AgentIdentifier<AgentIdentifierKinds.ToolInvocation>
/// Identifies an approval request.
public typealias AgentApprovalID = AgentIdentifier<AgentIdentifierKinds.Approval>
/// Identifies a history item.
public typealias AgentHistoryItemID = AgentIdentifier<AgentIdentifierKinds.HistoryItem>
