public import CodexCore
public import CodexSchema

/// One content part of an input message.
public enum ResponsesContentPart: Sendable, Hashable {
    /// User or developer text (`input_text`).
    case inputText(String)
    /// An image by URL or `data:` URL (`input_image`), with an optional detail level.
    case inputImage(url: String, detail: String?)
    /// Replayed assistant text (`output_text`).
    case outputText(String)
    /// A replayed assistant refusal (`refusal`).
    case refusal(String)

    /// The wire JSON.
    public var jsonValue: JSONValue {
        switch self {
        case .inputText(let text): return ["type": "input_text", "text": .string(text)]
        case .outputText(let text): return ["type": "output_text", "text": .string(text)]
        case .refusal(let text): return ["type": "refusal", "refusal": .string(text)]
        case .inputImage(let url, let detail):
            var object: JSONObject = ["type": "input_image", "image_url": .string(url)]
            if let detail { object["detail"] = .string(detail) }
            return .object(object)
        }
    }
}

/// One item of a request's `input`. Item IDs are never sent (requests are stateless).
public enum ResponsesInputItem: Sendable, Hashable {
    /// A message; `phase` is kept and sent back on assistant messages.
    case message(role: AgentMessageRole, content: [ResponsesContentPart], phase: AgentMessagePhase? = nil)
    /// A replayed function call.
    case functionCall(callID: String, name: String, arguments: String, namespace: String? = nil)
    /// A function result, as text or as content parts.
    case functionCallOutput(callID: String, output: Output)
    /// A replayed reasoning item.
    case reasoning(summary: [String], encryptedContent: String?)
    /// Any other item JSON, sent as it is.
    case raw(JSONValue)

    /// A function result's payload.
    public enum Output: Sendable, Hashable {
        /// Plain text.
        case text(String)
        /// Text and image parts.
        case content([ResponsesContentPart])
    }

    /// A user message with text and images (sent as `data:` URLs).
    public static func user(_ text: String, images: [AgentImageAttachment] = [], imageDetail: String? = nil) -> ResponsesInputItem {
        var parts: [ResponsesContentPart] = []
        if !text.isEmpty { parts.append(.inputText(text)) }
        parts.append(contentsOf: images.map { .inputImage(url: $0.dataURL, detail: imageDetail) })
        return .message(role: .user, content: parts)
    }

    /// A developer message (host context or turn policy).
    public static func developer(_ message: AgentDeveloperMessage) -> ResponsesInputItem {
        .message(role: .developer, content: [.inputText(message.text)])
    }

    /// A replayed tool result: all non-empty text blocks joined with blank lines.
    public static func toolResult(_ envelope: ToolResultEnvelope) -> ResponsesInputItem {
        .functionCallOutput(callID: envelope.invocationID.rawValue, output: .text(envelope.joinedText))
    }

    /// The wire JSON.
    public var jsonValue: JSONValue {
        switch self {
        case .message(let role, let content, let phase):
            var object: JSONObject = ["type": "message", "role": .string(role.rawValue), "content": .array(content.map(\.jsonValue))]
            if let phase { object["phase"] = .string(phase.wireName) }
            return .object(object)
        case .functionCall(let callID, let name, let arguments, let namespace):
            var object: JSONObject = ["type": "function_call", "call_id": .string(callID), "name": .string(name), "arguments": .string(arguments)]
            if let namespace { object["namespace"] = .string(namespace) }
            return .object(object)
        case .functionCallOutput(let callID, let output):
            let value: JSONValue
            switch output {
            case .text(let text): value = .string(text)
            case .content(let parts): value = .array(parts.map(\.jsonValue))
            }
            return ["type": "function_call_output", "call_id": .string(callID), "output": value]
        case .reasoning(let summary, let encryptedContent):
            var object: JSONObject = [
                "type": "reasoning", "summary": .array(summary.map { ["type": "summary_text", "text": .string($0)] }),
            ]
            if let encryptedContent { object["encrypted_content"] = .string(encryptedContent) }
            return .object(object)
        case .raw(let value):
            return value
        }
    }
}
