public import Foundation

/// One entry of a thread's history, in the order it happened. Replaying history as Responses input
/// needs every function call paired with its output and every reasoning item followed by its item.
public enum AgentHistoryItem: Sendable, Hashable, Codable {
    /// A user, assistant or developer message.
    case message(AgentMessage)
    /// A tool call the model made.
    case toolCall(ToolInvocation)
    /// A tool call's result.
    case toolResult(ToolResultEnvelope)
    /// A reasoning item to replay (encrypted content; raw reasoning is never stored).
    case reasoning(AgentReasoningItem)
    /// A turn lifecycle event.
    case systemEvent(AgentSystemEvent)
    /// A context compaction record: later requests replay its replacement instead of the items before
    /// it (they stay in the history).
    case contextCompaction(AgentContextCompaction)
}

/// A provider reasoning item kept for replay.
public struct AgentReasoningItem: Sendable, Hashable, Codable {
    /// The provider's item ID.
    public var itemID: String
    /// Reasoning-summary text blocks.
    public var summary: [String]
    /// The encrypted reasoning content.
    public var encryptedContent: String?

    /// Creates a reasoning item.
    public init(itemID: String, summary: [String] = [], encryptedContent: String? = nil) {
        self.itemID = itemID
        self.summary = summary
        self.encryptedContent = encryptedContent
    }
}

/// Kinds of system events in history. Unknown kinds are kept.
public struct AgentSystemEventType: OpenVocabulary {
    /// The name.
    public let rawValue: String
    /// Creates a kind.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A turn started.
    public static let turnStarted = AgentSystemEventType(rawValue: "turn_started")
    /// A turn completed.
    public static let turnCompleted = AgentSystemEventType(rawValue: "turn_completed")
    /// A turn failed.
    public static let turnFailed = AgentSystemEventType(rawValue: "turn_failed")
    /// A turn was interrupted.
    public static let turnInterrupted = AgentSystemEventType(rawValue: "turn_interrupted")
    /// The thread's context was compacted (a visible marker; the record is a separate history item).
    public static let contextCompacted = AgentSystemEventType(rawValue: "context_compacted")

}

/// A turn lifecycle event in history.
public struct AgentSystemEvent: Sendable, Hashable, Codable {
    /// What happened.
    public var type: AgentSystemEventType
    /// The turn.
    public var turnID: AgentTurnID
    /// When.
    public var occurredAt: Date
    /// A failure code, for failed turns.
    public var errorCode: String?
    /// Which memories the turn's instructions carried (on `turn_completed`, when the runtime has memory).
    public var memoryApplication: AgentMemoryApplication?

    /// Creates an event.
    public init(
        type: AgentSystemEventType, turnID: AgentTurnID, occurredAt: Date = Date(), errorCode: String? = nil,
        memoryApplication: AgentMemoryApplication? = nil
    ) {
        self.type = type
        self.turnID = turnID
        self.occurredAt = occurredAt
        self.errorCode = errorCode
        self.memoryApplication = memoryApplication
    }
}
