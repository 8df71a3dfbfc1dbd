public import CodexCore
import CodexSchema
import Foundation

/// Turns server-sent events of a Responses stream into typed ``ResponsesStreamEvent``s, strictly.
///
/// The event type is read from the JSON `type` (falling back to the SSE `event` name). Unknown types
/// are kept with their raw JSON. In a known event, a field that is missing where the event needs it
/// (`delta`, `text`, `arguments`, `response`, `item`), of the wrong type or out of range (a negative or
/// huge index, a fractional or overflowing `sequence_number`) is a `responses_event_malformed` error
/// with the event's byte offset, never a silent default; indices the event omits read as 0 (the Codex
/// backend leaves some out). Events whose `sequence_number` is not above the highest seen so far are
/// duplicates and are dropped (``decode(_:)`` returns `nil`). After `response.completed` (or another
/// terminal event) the response is over: any further event is an error.
///
/// ```swift
/// var decoder = ResponsesEventDecoder()
/// if let event = try decoder.decode(sseEvent) { … }
/// ```
public struct ResponsesEventDecoder: Sendable {
    private var highestSequenceNumber = -1
    private var parser = JSONReader.Parser(options: .init(maximumDepth: 128))
    private var lastItemID: (bytes: [UInt8], text: String) = ([], "")
    /// The terminal event already decoded, if any.
    private var ended: String?
    /// The terminal event just decoded, noted while its type string is at hand (asking the finished
    /// event would copy it per event); moved to `ended` once the event is complete.
    private var ending: String?
    /// Whether a terminal event (`response.completed`, `.failed`, `.incomplete`) was decoded: for the
    /// event ``decode(type:data:byteOffset:)`` just returned, whether it was that event, without asking
    /// the event (which copies it).
    package var hasEnded: Bool { ended != nil }
    /// How many duplicate events were dropped.
    public private(set) var droppedDuplicates = 0
    private let wallClock: any AgentWallClock

    /// Creates a decoder. `wallClock` turns relative reset times of rate-limit events into dates.
    public init(wallClock: any AgentWallClock = SystemWallClock()) {
        self.wallClock = wallClock
    }

    /// Decodes one event; `nil` for a duplicate.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` with code `responses_event_malformed` and the event's
    ///   ``SSEEvent/byteOffset``: the data is not a JSON object, a field is missing, of the wrong type or
    ///   out of range, or the event follows the end of the response.
    public mutating func decode(_ event: SSEEvent) throws(AgentRuntimeError) -> ResponsesStreamEvent? {
        try event.dataBytes.withUnsafeBufferPointer { (data) throws(AgentRuntimeError) in
            try decode(type: event.type, data: data, byteOffset: event.byteOffset)
        }
    }

    /// Decodes one event from its parts, as ``SSEFramer/feed(_:each:)`` hands them (`data` is only read
    /// during the call); `nil` for a duplicate.
    package mutating func decode(type: String, data: UnsafeBufferPointer<UInt8>, byteOffset: Int?) throws(AgentRuntimeError) -> ResponsesStreamEvent? {
        if let ended {
            throw AgentRuntimeError(.malformed("an event arrived after \(ended), which ends the response", byteOffset: byteOffset))
        }
        let wallClock = wallClock
        ending = nil
        var result: ResponsesStreamEvent?
        // Take the parser out while decoding (the closure also mutates `self`); swapping keeps its
        // storage uniquely referenced, so it is recycled, not copied.
        var parser = JSONReader.Parser()
        swap(&parser, &self.parser)
        defer { swap(&parser, &self.parser) }
        do {
            try parser.parse(buffer: data) { reader in
                result = try self.decode(reader.root, sseType: type, wallClock: wallClock)
            }
        } catch let error as MalformedEventField {
            throw AgentRuntimeError(.malformed(error.message, byteOffset: byteOffset))
        } catch var error as AgentRuntimeError {
            error.byteOffset = error.byteOffset ?? byteOffset
            throw error
        } catch {
            throw AgentRuntimeError(.malformed("a stream event's data is not valid JSON", byteOffset: byteOffset, underlying: error as? CodexSchemaError))
        }
        guard let decoded = result.take() else { return nil }
        let terminal = ending.take()
        if let sequence = decoded.sequenceNumber {
            if sequence <= highestSequenceNumber {
                // A duplicate ends nothing, a terminal one included: it is dropped whole.
                droppedDuplicates += 1
                return nil
            }
            highestSequenceNumber = sequence
        }
        if let terminal { ended = terminal }
        return decoded
    }

    /// The top-level fields of an event, gathered in one pass over its members. Positions, not nodes,
    /// are kept (a node carries its whole document view), so gathering them stays in registers.
    struct Fields {
        let root: JSONReader.Node
        private var positions: (Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32) = (-1, -1, -1, -1, -1, -1, -1, -1, -1)

        var type: JSONReader.Node? { node(positions.0) }
        var sequenceNumber: JSONReader.Node? { node(positions.1) }
        var itemID: JSONReader.Node? { node(positions.2) }
        var outputIndex: JSONReader.Node? { node(positions.3) }
        var contentIndex: JSONReader.Node? { node(positions.4) }
        var summaryIndex: JSONReader.Node? { node(positions.5) }
        var delta: JSONReader.Node? { node(positions.6) }
        var text: JSONReader.Node? { node(positions.7) }
        var arguments: JSONReader.Node? { node(positions.8) }

        @inline(__always)
        private func node(_ position: Int32) -> JSONReader.Node? {
            position < 0 ? nil : root.sibling(at: Int(position))
        }

        init(_ root: JSONReader.Node) {
            self.root = root
            var positions = self.positions
            root.forEachMember { key, value in
                let position = Int32(truncatingIfNeeded: value.position)
                switch key.count {
                case 4 where Self.matches(key, "type"): positions.0 = position
                case 4 where Self.matches(key, "text"): positions.7 = position
                case 5 where Self.matches(key, "delta"): positions.6 = position
                case 7 where Self.matches(key, "item_id"): positions.2 = position
                case 9 where Self.matches(key, "arguments"): positions.8 = position
                case 12 where Self.matches(key, "output_index"): positions.3 = position
                case 13 where Self.matches(key, "content_index"): positions.4 = position
                case 13 where Self.matches(key, "summary_index"): positions.5 = position
                case 15 where Self.matches(key, "sequence_number"): positions.1 = position
                default: break
                }
            }
            self.positions = positions
        }

        static func sameBytes(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
            guard lhs.count == rhs.count else { return false }
            guard let left = lhs.baseAddress, let right = rhs.baseAddress else { return lhs.count == 0 }
            return memcmp(left, right, lhs.count) == 0
        }

        /// Whether `bytes` spell `name` (field names are short: compared a word at a time, inline).
        @inline(__always)
        static func matches(_ bytes: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
            let count = name.utf8CodeUnitCount
            guard bytes.count == count, let base = bytes.baseAddress else { return false }
            let left = UnsafeRawPointer(base)
            let right = UnsafeRawPointer(name.utf8Start)
            var offset = 0
            while offset + 8 <= count {
                if left.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != right.loadUnaligned(fromByteOffset: offset, as: UInt64.self) { return false }
                offset += 8
            }
            if offset + 4 <= count {
                if left.loadUnaligned(fromByteOffset: offset, as: UInt32.self) != right.loadUnaligned(fromByteOffset: offset, as: UInt32.self) { return false }
                offset += 4
            }
            while offset < count {
                if left.load(fromByteOffset: offset, as: UInt8.self) != right.load(fromByteOffset: offset, as: UInt8.self) { return false }
                offset += 1
            }
            return true
        }
    }

    mutating func decode(_ root: JSONReader.Node, sseType: String, wallClock: any AgentWallClock) throws -> ResponsesStreamEvent {
        guard root.kind == .object else {
            throw AgentRuntimeError(.malformed("a stream event's data is not a JSON object"))
        }
        let fields = Fields(root)
        // The hottest event by far: handled before the type string is even created.
        if fields.type?.isString("response.output_text.delta") == true {
            let event = "response.output_text.delta"
            return ResponsesStreamEvent(sequenceNumber: try Self.sequenceNumber(fields, event), kind: .outputTextDelta(
                itemID: try itemID(fields.itemID, event), outputIndex: try EventField.index(fields.outputIndex, event, "output_index"),
                contentIndex: try EventField.index(fields.contentIndex, event, "content_index"), delta: try EventField.string(fields.delta, event, "delta")
            ))
        }
        let type: String
        if let node = fields.type {
            guard let text = node.string else { throw MalformedEventField(message: "a stream event's `type` must be a string") }
            type = text
        } else {
            type = sseType
        }
        let sequence = try Self.sequenceNumber(fields, type)
        let kind = try kind(of: type, root, fields, wallClock: wallClock)
        switch kind {
        case .completed, .failed, .incomplete: ending = type
        default: break
        }
        return ResponsesStreamEvent(sequenceNumber: sequence, kind: kind)
    }

    private static func sequenceNumber(_ fields: Fields, _ event: String) throws(MalformedEventField) -> Int? {
        try EventField.optionalCount(fields.sequenceNumber, event, "sequence_number")
    }

    private mutating func kind(
        of type: String, _ root: JSONReader.Node, _ fields: Fields, wallClock: any AgentWallClock
    ) throws(MalformedEventField) -> ResponsesStreamEvent.Kind {
        let event = type
        func index(_ node: JSONReader.Node?, _ name: StaticString) throws(MalformedEventField) -> Int { try EventField.index(node, event, name) }
        func text(_ node: JSONReader.Node?, _ name: StaticString) throws(MalformedEventField) -> String { try EventField.string(node, event, name) }
        switch type {
        case "response.output_text.done":
            return .outputTextDone(
                itemID: try itemID(fields.itemID, event), outputIndex: try index(fields.outputIndex, "output_index"),
                contentIndex: try index(fields.contentIndex, "content_index"), text: try text(fields.text, "text")
            )
        case "response.created": return .created(try EventField.responseInfo(root["response"], event))
        case "response.in_progress": return .inProgress(try EventField.responseInfo(root["response"], event))
        case "response.queued": return .queued(try EventField.responseInfo(root["response"], event))
        case "response.completed": return .completed(try EventField.responseInfo(root["response"], event))
        case "response.failed": return .failed(try EventField.responseInfo(root["response"], event))
        case "response.incomplete": return .incomplete(try EventField.responseInfo(root["response"], event))
        case "response.output_item.added":
            return .outputItemAdded(outputIndex: try index(fields.outputIndex, "output_index"), item: try EventField.outputItem(root["item"], event))
        case "response.output_item.done":
            return .outputItemDone(outputIndex: try index(fields.outputIndex, "output_index"), item: try EventField.outputItem(root["item"], event))
        case "response.content_part.added":
            return .contentPartAdded(
                itemID: try itemID(fields.itemID, event), outputIndex: try index(fields.outputIndex, "output_index"),
                contentIndex: try index(fields.contentIndex, "content_index")
            )
        case "response.content_part.done":
            return .contentPartDone(
                itemID: try itemID(fields.itemID, event), outputIndex: try index(fields.outputIndex, "output_index"),
                contentIndex: try index(fields.contentIndex, "content_index")
            )
        case "response.refusal.delta":
            return .refusalDelta(itemID: try itemID(fields.itemID, event), outputIndex: try index(fields.outputIndex, "output_index"), delta: try text(fields.delta, "delta"))
        case "response.reasoning_summary_part.added":
            return .reasoningSummaryPartAdded(
                itemID: try itemID(fields.itemID, event), outputIndex: try index(fields.outputIndex, "output_index"),
                summaryIndex: try index(fields.summaryIndex, "summary_index")
            )
        case "response.reasoning_summary_part.done":
            return .reasoningSummaryPartDone(
                itemID: try itemID(fields.itemID, event), outputIndex: try index(fields.outputIndex, "output_index"),
                summaryIndex: try index(fields.summaryIndex, "summary_index")
            )
        case "response.reasoning_summary_text.delta":
            return .reasoningSummaryTextDelta(
                itemID: try itemID(fields.itemID, event), outputIndex: try index(fields.outputIndex, "output_index"),
                summaryIndex: try index(fields.summaryIndex, "summary_index"), delta: try text(fields.delta, "delta")
            )
        case "response.reasoning_summary_text.done":
            return .reasoningSummaryTextDone(
                itemID: try itemID(fields.itemID, event), outputIndex: try index(fields.outputIndex, "output_index"),
                summaryIndex: try index(fields.summaryIndex, "summary_index"), text: try text(fields.text, "text")
            )
        case "response.reasoning_text.delta":
            return .reasoningTextDelta(
                itemID: try itemID(fields.itemID, event), outputIndex: try index(fields.outputIndex, "output_index"),
                contentIndex: try index(fields.contentIndex, "content_index"), delta: try text(fields.delta, "delta")
            )
        case "response.function_call_arguments.delta":
            return .functionCallArgumentsDelta(
                itemID: try itemID(fields.itemID, event), outputIndex: try index(fields.outputIndex, "output_index"), delta: try text(fields.delta, "delta")
            )
        case "response.function_call_arguments.done":
            return .functionCallArgumentsDone(
                itemID: try itemID(fields.itemID, event), outputIndex: try index(fields.outputIndex, "output_index"),
                arguments: try text(fields.arguments, "arguments")
            )
        case "response.custom_tool_call_input.delta":
            return .customToolCallInputDelta(
                itemID: try itemID(fields.itemID, event), callID: try EventField.optionalString(root["call_id"], event, "call_id"),
                delta: try text(fields.delta, "delta")
            )
        case "error":
            // The fields sit inside `error` (Responses) or at the top level (older servers, where `error`
            // may be the error type as a string).
            let errorName = root["error"]?.string
            let error = errorName == nil ? try EventField.optionalObject(root["error"], event, "error") : nil
            func field(_ name: StaticString) throws(MalformedEventField) -> String? {
                if let nested = try EventField.optionalString(error?.member(name.description), event, name) { return nested }
                return try EventField.optionalString(root.member(name.description), event, name)
            }
            return .error(
                code: try field("code"), type: try EventField.optionalString(error?["type"], event, "type") ?? errorName,
                message: try field("message"), param: try field("param")
            )
        case "codex.rate_limits":
            return .rateLimits(RateLimitParser.snapshots(fromEvent: root, now: wallClock.now()))
        default:
            if type.hasPrefix("response.web_search_call."), let status = type.split(separator: ".").last {
                return .webSearchCall(itemID: try itemID(fields.itemID, event), outputIndex: try index(fields.outputIndex, "output_index"), status: String(status))
            }
            if type.hasPrefix("response.image_generation_call."), let status = type.split(separator: ".").last {
                return .imageGenerationCall(
                    itemID: try itemID(fields.itemID, event), outputIndex: try index(fields.outputIndex, "output_index"), status: String(status),
                    partialImageBase64: try EventField.optionalString(root["partial_image_b64"], event, "partial_image_b64")
                )
            }
            return .unknown(type: type, raw: root.value)
        }
    }

    /// The item ID as a String (empty when absent), reusing the previous one when the bytes repeat
    /// (deltas of one item do).
    private mutating func itemID(_ node: JSONReader.Node?, _ event: String) throws(MalformedEventField) -> String {
        guard let node, !node.isNull else { return "" }
        guard let bytes = node.stringBytes else { throw MalformedEventField(message: "\(event): `item_id` must be a string") }
        if bytes.count == lastItemID.bytes.count, lastItemID.bytes.withUnsafeBufferPointer({ Fields.sameBytes($0, bytes) }) {
            return lastItemID.text
        }
        let text = String(decoding: bytes, as: UTF8.self)
        lastItemID = (Array(bytes), text)
        return text
    }
}
