public import CodexCore
public import CodexSchema

/// An output item of a response (`response.output_item.added` / `.done`). Open: unknown item types
/// keep their raw JSON.
public enum ResponsesOutputItem: Sendable, Hashable {
    /// An assistant message.
    case message(Message)
    /// A function (tool) call; `arguments` is the JSON text the model produced.
    case functionCall(FunctionCall)
    /// A reasoning item (summary text and encrypted content for stateless replay).
    case reasoning(Reasoning)
    /// A hosted web search.
    case webSearchCall(id: String, status: String?, action: JSONValue?)
    /// A hosted image generation (the base64 `result` may arrive while status is still `generating`).
    case imageGenerationCall(ImageGeneration)
    /// A freeform tool call.
    case customToolCall(id: String, callID: String, name: String, input: String)
    /// An item type this version does not model.
    case unknown(type: String, raw: JSONValue)

    /// An assistant message item.
    public struct Message: Sendable, Hashable {
        /// The item ID.
        public var id: String
        /// The role (normally `assistant`).
        public var role: String
        /// The phase, when the provider supplies one.
        public var phase: AgentMessagePhase?
        /// `in_progress` or `completed`, when present.
        public var status: String?
        /// The `output_text` parts' text, in order.
        public var textParts: [String]
        /// Refusal text, if the model refused.
        public var refusal: String?

        /// All text parts joined.
        public var text: String { textParts.joined() }
    }

    /// A function call item.
    public struct FunctionCall: Sendable, Hashable {
        /// The item ID.
        public var id: String
        /// The call ID results must answer.
        public var callID: String
        /// The tool name.
        public var name: String
        /// The arguments JSON text (may be empty while in progress).
        public var arguments: String
        /// The tool's namespace, when present.
        public var namespace: String?
        /// `in_progress` or `completed`, when present.
        public var status: String?
    }

    /// A reasoning item.
    public struct Reasoning: Sendable, Hashable {
        /// The item ID.
        public var id: String
        /// Summary text blocks.
        public var summary: [String]
        /// The encrypted reasoning content, when requested.
        public var encryptedContent: String?
    }

    /// An image generation item.
    public struct ImageGeneration: Sendable, Hashable {
        /// The item ID.
        public var id: String
        /// The status text.
        public var status: String?
        /// The image as base64, when present.
        public var resultBase64: String?
        /// The prompt as the generator rewrote it.
        public var revisedPrompt: String?
        /// The output format, e.g. `png`.
        public var outputFormat: String?
        /// The size, e.g. `1024x1024`.
        public var size: String?
        /// The quality, e.g. `high`.
        public var quality: String?
        /// The background setting.
        public var background: String?
    }

    /// The item's ID, when it has one.
    public var id: String? {
        switch self {
        case .message(let message): return message.id
        case .functionCall(let call): return call.id
        case .reasoning(let reasoning): return reasoning.id
        case .webSearchCall(let id, _, _): return id
        case .imageGenerationCall(let image): return image.id
        case .customToolCall(let id, _, _, _): return id
        case .unknown(_, let raw): return raw["id"]?.stringValue
        }
    }
}
