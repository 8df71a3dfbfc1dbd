public import Foundation

/// Who wrote a message.
public struct AgentMessageRole: OpenVocabulary {
    /// The wire name.
    public let rawValue: String
    /// Creates a role from its wire name (unknown names are kept).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The user.
    public static let user = AgentMessageRole(rawValue: "user")
    /// The model.
    public static let assistant = AgentMessageRole(rawValue: "assistant")
    /// Host-supplied instructions or context.
    public static let developer = AgentMessageRole(rawValue: "developer")
    /// System instructions.
    public static let system = AgentMessageRole(rawValue: "system")

}

/// What an assistant message is for, when the provider says: progress narration or the final answer.
/// Unknown future phases are kept as they are.
public enum AgentMessagePhase: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Progress narration (`commentary`).
    case commentary
    /// The final answer (`final_answer`).
    case finalAnswer
    /// A phase this version does not know, with its wire name.
    case unknown(String)

    /// Creates a phase from its wire name.
    public init(wireName: String) {
        switch wireName {
        case "commentary": self = .commentary
        case "final_answer": self = .finalAnswer
        default: self = .unknown(wireName)
        }
    }

    /// The wire name.
    public var wireName: String {
        switch self {
        case .commentary: return "commentary"
        case .finalAnswer: return "final_answer"
        case .unknown(let name): return name
        }
    }

    /// The wire name.
    public var description: String { wireName }

    /// Decodes the wire name.
    public init(from decoder: any Decoder) throws { self.init(wireName: try decoder.singleValueContainer().decode(String.self)) }
    /// Encodes the wire name.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wireName)
    }
}

/// One message in a thread.
public struct AgentMessage: Sendable, Hashable, Codable, Identifiable {
    /// The message's identifier.
    public var id: AgentMessageID
    /// The thread it belongs to.
    public var threadID: AgentThreadID
    /// Who wrote it.
    public var role: AgentMessageRole
    /// The text (for assistant messages, with structured-output framing removed).
    public var text: String
    /// Attached images.
    public var images: [AgentImageAttachment]
    /// The provider's phase, when supplied; `nil` for messages stored before phases existed.
    public var phase: AgentMessagePhase?
    /// Metadata of the structured payload committed with this message, if any.
    public var structuredOutput: AgentStructuredOutputMetadata?
    /// When it was created.
    public var createdAt: Date

    /// Creates a message.
    public init(
        id: AgentMessageID = AgentMessageID(),
        threadID: AgentThreadID,
        role: AgentMessageRole,
        text: String,
        images: [AgentImageAttachment] = [],
        phase: AgentMessagePhase? = nil,
        structuredOutput: AgentStructuredOutputMetadata? = nil,
        createdAt: Date = Date()
    ) {
        self.id = id
        self.threadID = threadID
        self.role = role
        self.text = text
        self.images = images
        self.phase = phase
        self.structuredOutput = structuredOutput
        self.createdAt = createdAt
    }
}
