public import CodexCore
import CodexSchema
import Foundation

/// Turns server-sent events of a Responses stream into typed ``ResponsesStreamEvent``s.
///
/// The event type is read from the JSON `type` (falling back to the SSE `event` name). Unknown types
/// are kept with their raw JSON. Events whose `sequence_number` is not above the highest seen so far
/// are duplicates and are dropped (``decode(_:)`` returns `nil`).
///
/// ```swift
/// var decoder = ResponsesEventDecoder()
/// if let event = try decoder.decode(sseEvent) { … }
/// ```
public struct ResponsesEventDecoder: Sendable {
    private var highestSequenceNumber = -1
    private var parser = JSONReader.Parser(options: .init(maximumDepth: 128))
    private var lastItemID: (bytes: [UInt8], text: String) = ([], "")
    /// How many duplicate events were dropped.
    public private(set) var droppedDuplicates = 0
    private let wallClock: any AgentWallClock

    /// Creates a decoder. `wallClock` turns relative reset times of rate-limit events into dates.
    public init(wallClock: any AgentWallClock = SystemWallClock()) {
        self.wallClock = wallClock
    }

    /// Decodes one event; `nil` for a duplicate.
    ///
    /// - Throws: ``AgentRuntimeError`` with code `responses_event_malformed` when the data is not a JSON object.
    public mutating func decode(_ event: SSEEvent) throws(AgentRuntimeError) -> ResponsesStreamEvent? {
        let wallClock = wallClock
        var result: ResponsesStreamEvent?
        // Take the parser out while decoding (the closure also mutates `self`); swapping keeps its
        // storage uniquely referenced, so it is recycled, not copied.
        var parser = JSONReader.Parser()
        swap(&parser, &self.parser)
        defer { swap(&parser, &self.parser) }
        do {
            try parser.parse(event.dataBytes) { reader in
                result = try self.decode(reader.root, sseType: event.type, wallClock: wallClock)
            }
        } catch let error as AgentRuntimeError {
            throw error
        } catch {
            throw AgentRuntimeError(
                code: .responsesEventMalformed,
                message: "a stream event's data is not valid JSON",
                underlying: error as? CodexSchemaError
            )
        }
        guard let decoded = result else { return nil }
        if let sequence = decoded.sequenceNumber {
            if sequence <= highestSequenceNumber {
                droppedDuplicates += 1
                return nil
            }
            highestSequenceNumber = sequence
        }
        return decoded
    }

    /// The top-level fields of an event, gathered in one pass over its members.
    struct Fields {
        var type: JSONReader.Node?
        var sequenceNumber: JSONReader.Node?
        var itemID: JSONReader.Node?
        var outputIndex: JSONReader.Node?
        var contentIndex: JSONReader.Node?
        var summaryIndex: JSONReader.Node?
        var delta: JSONReader.Node?
        var text: JSONReader.Node?
        var arguments: JSONReader.Node?

        init(_ root: JSONReader.Node) {
            root.forEachMember { key, value in
                switch key.count {
                case 4 where Self.matches(key, "type"): type = value
                case 4 where Self.matches(key, "text"): text = value
                case 5 where Self.matches(key, "delta"): delta = value
                case 7 where Self.matches(key, "item_id"): itemID = value
                case 9 where Self.matches(key, "arguments"): arguments = value
                case 12 where Self.matches(key, "output_index"): outputIndex = value
                case 13 where Self.matches(key, "content_index"): contentIndex = value
                case 13 where Self.matches(key, "summary_index"): summaryIndex = value
                case 15 where Self.matches(key, "sequence_number"): sequenceNumber = value
                default: break
                }
            }
        }

        static func sameBytes(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
            guard lhs.count == rhs.count else { return false }
            for index in 0..<lhs.count where lhs[index] != rhs[index] { return false }
            return true
        }

        @inline(__always)
        static func matches(_ bytes: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
            guard bytes.count == name.utf8CodeUnitCount else { return false }
            for index in 0..<bytes.count where bytes[index] != name.utf8Start[index] { return false }
            return true
        }
    }

    mutating func decode(_ root: JSONReader.Node, sseType: String, wallClock: any AgentWallClock) throws -> ResponsesStreamEvent {
        guard root.kind == .object else {
            throw AgentRuntimeError(code: .responsesEventMalformed, message: "a stream event's data is not a JSON object")
        }
        let fields = Fields(root)
        let sequence = fields.sequenceNumber?.int
        let outputIndex = fields.outputIndex?.int ?? 0
        // The hottest event by far: handled before the type string is even created.
        if fields.type?.isString("response.output_text.delta") == true {
            return ResponsesStreamEvent(sequenceNumber: sequence, kind: .outputTextDelta(
                itemID: itemID(fields.itemID), outputIndex: outputIndex, contentIndex: fields.contentIndex?.int ?? 0, delta: fields.delta?.string ?? ""
            ))
        }
        let type = fields.type?.string ?? sseType
        let itemID = itemID(fields.itemID)
        let kind: ResponsesStreamEvent.Kind
        switch type {
        case "response.output_text.done":
            kind = .outputTextDone(itemID: itemID, outputIndex: outputIndex, contentIndex: fields.contentIndex?.int ?? 0, text: fields.text?.string ?? "")
        case "response.created": kind = .created(Self.responseInfo(root["response"]))
        case "response.in_progress": kind = .inProgress(Self.responseInfo(root["response"]))
        case "response.queued": kind = .queued(Self.responseInfo(root["response"]))
        case "response.completed": kind = .completed(Self.responseInfo(root["response"]))
        case "response.failed": kind = .failed(Self.responseInfo(root["response"]))
        case "response.incomplete": kind = .incomplete(Self.responseInfo(root["response"]))
        case "response.output_item.added":
            kind = .outputItemAdded(outputIndex: outputIndex, item: Self.outputItem(root["item"]))
        case "response.output_item.done":
            kind = .outputItemDone(outputIndex: outputIndex, item: Self.outputItem(root["item"]))
        case "response.content_part.added":
            kind = .contentPartAdded(itemID: itemID, outputIndex: outputIndex, contentIndex: fields.contentIndex?.int ?? 0)
        case "response.content_part.done":
            kind = .contentPartDone(itemID: itemID, outputIndex: outputIndex, contentIndex: fields.contentIndex?.int ?? 0)
        case "response.refusal.delta":
            kind = .refusalDelta(itemID: itemID, outputIndex: outputIndex, delta: fields.delta?.string ?? "")
        case "response.reasoning_summary_part.added":
            kind = .reasoningSummaryPartAdded(itemID: itemID, outputIndex: outputIndex, summaryIndex: fields.summaryIndex?.int ?? 0)
        case "response.reasoning_summary_part.done":
            kind = .reasoningSummaryPartDone(itemID: itemID, outputIndex: outputIndex, summaryIndex: fields.summaryIndex?.int ?? 0)
        case "response.reasoning_summary_text.delta":
            kind = .reasoningSummaryTextDelta(
                itemID: itemID, outputIndex: outputIndex, summaryIndex: fields.summaryIndex?.int ?? 0, delta: fields.delta?.string ?? ""
            )
        case "response.reasoning_summary_text.done":
            kind = .reasoningSummaryTextDone(
                itemID: itemID, outputIndex: outputIndex, summaryIndex: fields.summaryIndex?.int ?? 0, text: fields.text?.string ?? ""
            )
        case "response.reasoning_text.delta":
            kind = .reasoningTextDelta(itemID: itemID, outputIndex: outputIndex, contentIndex: fields.contentIndex?.int ?? 0, delta: fields.delta?.string ?? "")
        case "response.function_call_arguments.delta":
            kind = .functionCallArgumentsDelta(itemID: itemID, outputIndex: outputIndex, delta: fields.delta?.string ?? "")
        case "response.function_call_arguments.done":
            kind = .functionCallArgumentsDone(itemID: itemID, outputIndex: outputIndex, arguments: fields.arguments?.string ?? "")
        case "response.custom_tool_call_input.delta":
            kind = .customToolCallInputDelta(itemID: itemID, callID: root["call_id"]?.string, delta: fields.delta?.string ?? "")
        case "error":
            let error = root["error"]
            kind = .error(
                code: error?["code"]?.string ?? root["code"]?.string,
                type: error?["type"]?.string ?? root["error"]?.string,
                message: error?["message"]?.string ?? root["message"]?.string,
                param: error?["param"]?.string ?? root["param"]?.string
            )
        case "codex.rate_limits":
            kind = .rateLimits(RateLimitParser.snapshots(fromEvent: root, now: wallClock.now()))
        default:
            if type.hasPrefix("response.web_search_call."), let status = type.split(separator: ".").last {
                kind = .webSearchCall(itemID: itemID, outputIndex: outputIndex, status: String(status))
            } else if type.hasPrefix("response.image_generation_call."), let status = type.split(separator: ".").last {
                kind = .imageGenerationCall(
                    itemID: itemID, outputIndex: outputIndex, status: String(status), partialImageBase64: root["partial_image_b64"]?.string
                )
            } else {
                kind = .unknown(type: type, raw: root.value)
            }
        }
        return ResponsesStreamEvent(sequenceNumber: sequence, kind: kind)
    }

    /// The item ID as a String, reusing the previous one when the bytes repeat (deltas of one item do).
    private mutating func itemID(_ node: JSONReader.Node?) -> String {
        guard let bytes = node?.stringBytes else { return "" }
        if bytes.count == lastItemID.bytes.count, lastItemID.bytes.withUnsafeBufferPointer({ Fields.sameBytes($0, bytes) }) {
            return lastItemID.text
        }
        let text = String(decoding: bytes, as: UTF8.self)
        lastItemID = (Array(bytes), text)
        return text
    }

    static func responseInfo(_ node: JSONReader.Node?) -> ResponsesResponseInfo {
        guard let node, node.kind == .object else { return ResponsesResponseInfo() }
        let error = node["error"]
        return ResponsesResponseInfo(
            id: node["id"]?.string,
            model: node["model"]?.string,
            status: node["status"]?.string,
            usage: usage(node["usage"]),
            errorCode: error?["code"]?.string,
            errorMessage: error?["message"]?.string,
            incompleteReason: node["incomplete_details"]?["reason"]?.string
        )
    }

    static func usage(_ node: JSONReader.Node?) -> AgentUsage? {
        guard let node, node.kind == .object else { return nil }
        return AgentUsage(
            inputTokens: node["input_tokens"]?.int,
            cachedInputTokens: node["input_tokens_details"]?["cached_tokens"]?.int,
            cacheWriteInputTokens: node["input_tokens_details"]?["cache_write_tokens"]?.int,
            outputTokens: node["output_tokens"]?.int,
            reasoningOutputTokens: node["output_tokens_details"]?["reasoning_tokens"]?.int,
            totalTokens: node["total_tokens"]?.int
        )
    }

    static func outputItem(_ node: JSONReader.Node?) -> ResponsesOutputItem {
        guard let node, node.kind == .object else { return .unknown(type: "", raw: .null) }
        let id = node["id"]?.string ?? ""
        let type = node["type"]?.string ?? ""
        switch type {
        case "message":
            var texts: [String] = []
            var refusal: String?
            for part in node["content"]?.elements ?? [] {
                if part["type"]?.isString("output_text") == true { texts.append(part["text"]?.string ?? "") }
                if part["type"]?.isString("refusal") == true { refusal = part["refusal"]?.string }
            }
            return .message(.init(
                id: id, role: node["role"]?.string ?? "assistant", phase: node["phase"]?.string.map(AgentMessagePhase.init(wireName:)),
                status: node["status"]?.string, textParts: texts, refusal: refusal
            ))
        case "function_call":
            return .functionCall(.init(
                id: id, callID: node["call_id"]?.string ?? "", name: node["name"]?.string ?? "", arguments: node["arguments"]?.string ?? "",
                namespace: node["namespace"]?.string, status: node["status"]?.string
            ))
        case "reasoning":
            let summary = (node["summary"]?.elements ?? []).compactMap { $0["text"]?.string }
            return .reasoning(.init(id: id, summary: summary, encryptedContent: node["encrypted_content"]?.string))
        case "web_search_call":
            return .webSearchCall(id: id, status: node["status"]?.string, action: node["action"]?.value)
        case "image_generation_call":
            return .imageGenerationCall(.init(
                id: id, status: node["status"]?.string, resultBase64: node["result"]?.string, revisedPrompt: node["revised_prompt"]?.string,
                outputFormat: node["output_format"]?.string, size: node["size"]?.string, quality: node["quality"]?.string,
                background: node["background"]?.string
            ))
        case "custom_tool_call":
            return .customToolCall(id: id, callID: node["call_id"]?.string ?? "", name: node["name"]?.string ?? "", input: node["input"]?.string ?? "")
        default:
            return .unknown(type: type, raw: node.value)
        }
    }
}
