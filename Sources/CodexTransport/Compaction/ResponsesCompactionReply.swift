import CodexCore
public import CodexSchema

/// The rules a `/responses/compact` reply must meet before its items replace a thread's history, and
/// the filter that keeps only documented item types when a stored replacement is replayed.
///
/// A reply replaces everything it stands for, so a careless or hostile server could erase a thread or
/// plant instructions in it. A reply is refused (`compaction_invalid`) when its `output`:
/// - is empty;
/// - holds an item whose `type` is not one of ``replayableTypes`` (an item without a `type` but with a
///   `role` is a message, as the Responses API reads it);
/// - holds a `system` or `developer` message whose text is neither the request's `instructions` nor
///   the text of a `system` or `developer` message of the input it was sent (a summary may keep the
///   host's instructions, never add new ones);
/// - holds a message with another role than `user`, `assistant`, `developer` or `system`.
public enum ResponsesCompactionReply {
    /// The item types the Responses wire documents as input items, and so the only ones replayed:
    /// messages, function and custom tool calls and their outputs, reasoning, local shell, web search,
    /// image generation and tool search calls, and compaction items.
    public static let replayableTypes: Set<String> = [
        "message", "function_call", "function_call_output", "reasoning", "custom_tool_call", "custom_tool_call_output",
        "local_shell_call", "local_shell_call_output", "web_search_call", "image_generation_call", "tool_search_call",
        "tool_search_output", "compaction", "compaction_trigger",
    ]

    /// Checks `output` against what the compaction was sent: `input` and `instructions`.
    /// - Throws: ``CodexCore/AgentRuntimeError`` `compaction_invalid`, naming the rule (never the text).
    public static func validate(_ output: [JSONValue], input: [ResponsesInputItem], instructions: String?) throws {
        guard !output.isEmpty else { throw invalid("the compaction reply has no items: it would erase the thread's history") }
        let sentInstructions = Set(input.compactMap(instructionText) + (instructions.map { [$0] } ?? []))
        for (index, item) in output.enumerated() {
            guard let type = itemType(item) else {
                throw invalid("compaction item \(index) has no type")
            }
            guard replayableTypes.contains(type) else {
                throw invalid("compaction item \(index) has a type the Responses API does not document")
            }
            guard type == "message" else { continue }
            switch item["role"]?.stringValue {
            case "user", "assistant":
                continue
            case "system", "developer":
                guard sentInstructions.contains(text(of: item)) else {
                    throw invalid("compaction item \(index) is a system or developer message the compaction was not sent")
                }
            default:
                throw invalid("compaction item \(index) is a message without a user, assistant, developer or system role")
            }
        }
    }

    /// Whether a stored replacement item is replayed: its type is one of ``replayableTypes``.
    public static func isReplayable(_ item: JSONValue) -> Bool {
        itemType(item).map(replayableTypes.contains) ?? false
    }

    /// The item's `type`, or `message` for an item with a `role` and no `type`.
    private static func itemType(_ item: JSONValue) -> String? {
        guard item.objectValue != nil else { return nil }
        if let type = item["type"] { return type.stringValue }
        return item["role"]?.stringValue == nil ? nil : "message"
    }

    /// A message's text: its string content, or its text parts joined.
    private static func text(of message: JSONValue) -> String {
        if let text = message["content"]?.stringValue { return text }
        guard case .array(let parts)? = message["content"] else { return "" }
        return parts.compactMap { $0["text"]?.stringValue }.joined()
    }

    /// The text of a `system` or `developer` input message, or `nil` for any other item.
    private static func instructionText(_ item: ResponsesInputItem) -> String? {
        switch item {
        case .message(let role, _, _) where role == .developer || role == .system:
            return text(of: item.jsonValue)
        case .raw(let json) where ["system", "developer"].contains(json["role"]?.stringValue ?? ""):
            return text(of: json)
        default:
            return nil
        }
    }

    private static func invalid(_ message: String) -> AgentRuntimeError {
        AgentRuntimeError(.compactionInvalid(message))
    }
}
