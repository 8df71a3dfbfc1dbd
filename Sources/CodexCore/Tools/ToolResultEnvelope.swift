public import Foundation

/// One block of tool output.
public enum ToolResultContent: Sendable, Hashable, Codable {
    /// Text.
    case text(String)
    /// An image URL (`http` or `https`). The runtime downloads it after the call and, when the reply is a
    /// 2xx whose bytes are a complete PNG, JPEG, GIF, WebP, HEIC or HEIF image, keeps the bytes unchanged
    /// as an image of an assistant message in the thread's history; anything else is omitted.
    case image(URL)
}

/// Session information a tool may return.
public struct ToolSessionDescriptor: Sendable, Hashable, Codable {
    /// An identifier of the tool's session.
    public var id: String
    /// A human-readable title.
    public var title: String?

    /// Creates a descriptor.
    public init(id: String, title: String? = nil) {
        self.id = id
        self.title = title
    }
}

/// The outcome of one tool call. It must keep the invocation's ID and tool name; a mismatch is recorded
/// as a failure of the original call.
public struct ToolResultEnvelope: Sendable, Hashable, Codable {
    /// How the call ended.
    public enum Status: String, Sendable, Hashable, Codable {
        /// The tool ran and returned output.
        case success
        /// The tool failed.
        case failure
        /// The host denied the call.
        case denied
    }

    /// The most content blocks accepted.
    public static let maximumContentItems = 256

    /// The call's ID.
    public var invocationID: ToolInvocationID
    /// The tool's name.
    public var toolName: String
    /// How the call ended.
    public var status: Status
    /// The output blocks.
    public var content: [ToolResultContent]
    /// Session information, if the tool returned some.
    public var session: ToolSessionDescriptor?

    /// Creates an envelope.
    public init(
        invocationID: ToolInvocationID, toolName: String, status: Status, content: [ToolResultContent], session: ToolSessionDescriptor? = nil
    ) {
        self.invocationID = invocationID
        self.toolName = toolName
        self.status = status
        self.content = content
        self.session = session
    }

    /// A successful text result.
    public static func success(_ invocation: ToolInvocation, text: String) -> ToolResultEnvelope {
        ToolResultEnvelope(invocationID: invocation.id, toolName: invocation.toolName, status: .success, content: [.text(text)])
    }

    /// A failed result with a message.
    public static func failure(_ invocation: ToolInvocation, message: String) -> ToolResultEnvelope {
        ToolResultEnvelope(invocationID: invocation.id, toolName: invocation.toolName, status: .failure, content: [.text(message)])
    }

    /// A denied result.
    public static func denied(_ invocation: ToolInvocation, message: String = "The user denied this tool call.") -> ToolResultEnvelope {
        ToolResultEnvelope(invocationID: invocation.id, toolName: invocation.toolName, status: .denied, content: [.text(message)])
    }

    /// The first non-empty text block, for concise previews.
    public var primaryText: String? {
        textBlocks.first
    }

    /// All non-empty text blocks joined with blank lines: what providers, fallback replies and
    /// compaction see.
    public var joinedText: String {
        textBlocks.joined(separator: "\n\n")
    }

    private var textBlocks: [String] {
        content.compactMap { block in
            if case .text(let text) = block, !text.isEmpty { return text }
            return nil
        }
    }

    /// Whether this envelope answers `invocation` (same ID and tool name).
    public func matches(_ invocation: ToolInvocation) -> Bool {
        invocationID == invocation.id && toolName == invocation.toolName
    }
}
