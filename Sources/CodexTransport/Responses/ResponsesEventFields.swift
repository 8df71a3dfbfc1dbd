import CodexCore
import CodexSchema

/// A field of a known event that is missing, of the wrong type or out of range. Thrown while one event
/// is read and turned into `responses_event_malformed` (with the event's byte offset) by
/// ``ResponsesEventDecoder``. The message names the event type and the field, never a value.
struct MalformedEventField: Error {
    let message: String
}

/// Strict readers for the fields of a Responses event: a field that must be there must be there with
/// its type; an optional field may be absent or `null`, but when present it must have its type and
/// range. Indices missing from an event read as 0 (the Codex backend omits `output_index` on some
/// events); a present index must be a non-negative integer that fits `Int`.
enum EventField {
    /// A required string.
    @inline(__always)
    static func string(_ node: JSONReader.Node?, _ event: String, _ name: StaticString) throws(MalformedEventField) -> String {
        guard let node else { throw MalformedEventField(message: "\(event) has no `\(name)`") }
        guard let text = node.string else { throw MalformedEventField(message: "\(event): `\(name)` must be a string") }
        return text
    }

    /// An optional string (`nil` when absent or `null`).
    @inline(__always)
    static func optionalString(_ node: JSONReader.Node?, _ event: String, _ name: StaticString) throws(MalformedEventField) -> String? {
        guard let node, !node.isNull else { return nil }
        guard let text = node.string else { throw MalformedEventField(message: "\(event): `\(name)` must be a string") }
        return text
    }

    /// An index: 0 when absent, else a non-negative integer.
    @inline(__always)
    static func index(_ node: JSONReader.Node?, _ event: String, _ name: StaticString) throws(MalformedEventField) -> Int {
        guard let node else { return 0 }
        return try count(node, event, name)
    }

    /// An optional non-negative integer (`nil` when absent or `null`).
    static func optionalCount(_ node: JSONReader.Node?, _ event: String, _ name: StaticString) throws(MalformedEventField) -> Int? {
        guard let node, !node.isNull else { return nil }
        return try count(node, event, name)
    }

    @inline(__always)
    private static func count(_ node: JSONReader.Node, _ event: String, _ name: StaticString) throws(MalformedEventField) -> Int {
        guard node.kind == .number else { throw MalformedEventField(message: "\(event): `\(name)` must be an integer") }
        guard let value = node.int else {
            throw MalformedEventField(message: "\(event): `\(name)` is not an integer in range")
        }
        guard value >= 0 else { throw MalformedEventField(message: "\(event): `\(name)` must not be negative") }
        return value
    }

    /// A required object.
    static func object(_ node: JSONReader.Node?, _ event: String, _ name: StaticString) throws(MalformedEventField) -> JSONReader.Node {
        guard let node else { throw MalformedEventField(message: "\(event) has no `\(name)` object") }
        guard node.kind == .object else { throw MalformedEventField(message: "\(event): `\(name)` must be an object") }
        return node
    }

    /// An optional object (`nil` when absent or `null`).
    static func optionalObject(_ node: JSONReader.Node?, _ event: String, _ name: StaticString) throws(MalformedEventField) -> JSONReader.Node? {
        guard let node, !node.isNull else { return nil }
        guard node.kind == .object else { throw MalformedEventField(message: "\(event): `\(name)` must be an object") }
        return node
    }

    /// An optional array's elements (empty when absent or `null`).
    static func optionalArray(_ node: JSONReader.Node?, _ event: String, _ name: StaticString) throws(MalformedEventField) -> [JSONReader.Node] {
        guard let node, !node.isNull else { return [] }
        guard node.kind == .array else { throw MalformedEventField(message: "\(event): `\(name)` must be an array") }
        return node.elements
    }

    // MARK: - Nested shapes

    /// The `response` object of a lifecycle event.
    static func responseInfo(_ node: JSONReader.Node?, _ event: String) throws(MalformedEventField) -> ResponsesResponseInfo {
        let response = try object(node, event, "response")
        let error = try optionalObject(response["error"], event, "response.error")
        let incomplete = try optionalObject(response["incomplete_details"], event, "response.incomplete_details")
        return ResponsesResponseInfo(
            id: try optionalString(response["id"], event, "response.id"),
            model: try optionalString(response["model"], event, "response.model"),
            status: try optionalString(response["status"], event, "response.status"),
            usage: try usage(response["usage"], event),
            errorCode: try optionalString(error?["code"], event, "response.error.code"),
            errorMessage: try optionalString(error?["message"], event, "response.error.message"),
            incompleteReason: try optionalString(incomplete?["reason"], event, "response.incomplete_details.reason")
        )
    }

    static func usage(_ node: JSONReader.Node?, _ event: String) throws(MalformedEventField) -> AgentUsage? {
        guard let usage = try optionalObject(node, event, "response.usage") else { return nil }
        let input = try optionalObject(usage["input_tokens_details"], event, "usage.input_tokens_details")
        let output = try optionalObject(usage["output_tokens_details"], event, "usage.output_tokens_details")
        return AgentUsage(
            inputTokens: try optionalCount(usage["input_tokens"], event, "usage.input_tokens"),
            cachedInputTokens: try optionalCount(input?["cached_tokens"], event, "usage.input_tokens_details.cached_tokens"),
            cacheWriteInputTokens: try optionalCount(input?["cache_write_tokens"], event, "usage.input_tokens_details.cache_write_tokens"),
            outputTokens: try optionalCount(usage["output_tokens"], event, "usage.output_tokens"),
            reasoningOutputTokens: try optionalCount(output?["reasoning_tokens"], event, "usage.output_tokens_details.reasoning_tokens"),
            totalTokens: try optionalCount(usage["total_tokens"], event, "usage.total_tokens")
        )
    }

    /// The `item` of an output-item event. Item types this version does not model keep their raw JSON.
    static func outputItem(_ node: JSONReader.Node?, _ event: String) throws(MalformedEventField) -> ResponsesOutputItem {
        let item = try object(node, event, "item")
        let type = try string(item["type"], event, "item.type")
        let id = try optionalString(item["id"], event, "item.id") ?? ""
        switch type {
        case "message":
            var texts: [String] = []
            var refusal: String?
            for part in try optionalArray(item["content"], event, "item.content") {
                guard part.kind == .object else { throw MalformedEventField(message: "\(event): `item.content` holds a part that is not an object") }
                switch try optionalString(part["type"], event, "item.content.type") {
                case "output_text": texts.append(try string(part["text"], event, "item.content.text"))
                case "refusal": refusal = try string(part["refusal"], event, "item.content.refusal")
                default: break
                }
            }
            return .message(.init(
                id: id, role: try optionalString(item["role"], event, "item.role") ?? "assistant",
                phase: try optionalString(item["phase"], event, "item.phase").map(AgentMessagePhase.init(wireName:)),
                status: try optionalString(item["status"], event, "item.status"), textParts: texts, refusal: refusal
            ))
        case "function_call":
            return .functionCall(.init(
                id: id, callID: try string(item["call_id"], event, "item.call_id"), name: try string(item["name"], event, "item.name"),
                arguments: try optionalString(item["arguments"], event, "item.arguments") ?? "",
                namespace: try optionalString(item["namespace"], event, "item.namespace"), status: try optionalString(item["status"], event, "item.status")
            ))
        case "reasoning":
            var summary: [String] = []
            for part in try optionalArray(item["summary"], event, "item.summary") {
                guard part.kind == .object else { throw MalformedEventField(message: "\(event): `item.summary` holds a part that is not an object") }
                summary.append(try string(part["text"], event, "item.summary.text"))
            }
            return .reasoning(.init(id: id, summary: summary, encryptedContent: try optionalString(item["encrypted_content"], event, "item.encrypted_content")))
        case "web_search_call":
            return .webSearchCall(id: id, status: try optionalString(item["status"], event, "item.status"), action: item["action"]?.value)
        case "image_generation_call":
            return .imageGenerationCall(.init(
                id: id, status: try optionalString(item["status"], event, "item.status"), resultBase64: try optionalString(item["result"], event, "item.result"),
                revisedPrompt: try optionalString(item["revised_prompt"], event, "item.revised_prompt"),
                outputFormat: try optionalString(item["output_format"], event, "item.output_format"),
                size: try optionalString(item["size"], event, "item.size"), quality: try optionalString(item["quality"], event, "item.quality"),
                background: try optionalString(item["background"], event, "item.background")
            ))
        case "custom_tool_call":
            return .customToolCall(
                id: id, callID: try string(item["call_id"], event, "item.call_id"), name: try string(item["name"], event, "item.name"),
                input: try optionalString(item["input"], event, "item.input") ?? ""
            )
        default:
            return .unknown(type: type, raw: item.value)
        }
    }
}
