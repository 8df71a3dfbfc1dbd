import CodexSchema
import Foundation

/// A compact JSON form of a history item for storage rows, written and read with CodexSchema's fast
/// serializer and parser and hand-written field mapping, instead of `Codable` through Foundation's
/// `JSONEncoder`/`JSONDecoder` (which dominated restore time). Rare nested values (image attachments,
/// structured-output metadata) still go through `Codable` when present. Dates are stored as seconds since
/// the reference date, exactly as `Date` holds them, so they round-trip bit for bit.
extension AgentHistoryItem {
    /// The item as a compact JSON storage row: `{"k":"message",…}`.
    package func storageRow() -> [UInt8] {
        var row: JSONObject
        switch self {
        case .message(let message):
            row = ["k": "message", "id": .string(message.id.rawValue), "thread": .string(message.threadID.rawValue),
                   "role": .string(message.role.rawValue), "text": .string(message.text), "at": Self.date(message.createdAt)]
            if let phase = message.phase { row["phase"] = .string(phase.wireName) }
            if !message.images.isEmpty { row["images"] = Self.codable(message.images) }
            if let structured = message.structuredOutput { row["structured"] = Self.codable(structured) }
        case .toolCall(let call):
            row = ["k": "tool_call", "id": .string(call.id.rawValue), "tool": .string(call.toolName), "args": .string(call.arguments)]
            if let thread = call.threadID { row["thread"] = .string(thread.rawValue) }
            if let turn = call.turnID { row["turn"] = .string(turn.rawValue) }
        case .toolResult(let result):
            let content: [JSONValue] = result.content.map { block in
                switch block {
                case .text(let text): ["text": .string(text)]
                case .image(let url): ["image": .string(url.absoluteString)]
                }
            }
            row = ["k": "tool_result", "id": .string(result.invocationID.rawValue), "tool": .string(result.toolName),
                   "status": .string(result.status.rawValue), "content": .array(content)]
            if let session = result.session {
                var object: JSONObject = ["id": .string(session.id)]
                if let title = session.title { object["title"] = .string(title) }
                row["session"] = .object(object)
            }
        case .reasoning(let reasoning):
            row = ["k": "reasoning", "id": .string(reasoning.itemID), "summary": .array(reasoning.summary.map(JSONValue.string))]
            if let encrypted = reasoning.encryptedContent { row["enc"] = .string(encrypted) }
        case .systemEvent(let event):
            row = ["k": "system_event", "type": .string(event.type.rawValue), "turn": .string(event.turnID.rawValue), "at": Self.date(event.occurredAt)]
            if let code = event.errorCode { row["error"] = .string(code) }
        case .contextCompaction(let compaction):
            row = ["k": "compaction", "record": Self.codable(compaction)]
        }
        return JSONValue.object(row).canonicalBytes()
    }

    /// Reads a storage row written by ``storageRow()``.
    /// - Throws: ``AgentRuntimeError`` `storage_failure` for a row that is not one.
    package init(storageRow bytes: some Collection<UInt8>) throws(AgentRuntimeError) {
        guard case .object(let row)? = try? JSONValue(parsing: bytes), case .string(let kind)? = row["k"] else {
            throw Self.undecodable("is not a storage row")
        }
        let fields = RowFields(row: row)
        switch kind {
        case "message":
            var message = AgentMessage(
                id: AgentMessageID(rawValue: try fields.string("id")), threadID: AgentThreadID(rawValue: try fields.string("thread")),
                role: AgentMessageRole(rawValue: try fields.string("role")), text: try fields.string("text"),
                phase: fields.optionalString("phase").map(AgentMessagePhase.init(wireName:)), createdAt: try fields.date("at")
            )
            if let images = row["images"] { message.images = try Self.decode([AgentImageAttachment].self, images) }
            if let structured = row["structured"] { message.structuredOutput = try Self.decode(AgentStructuredOutputMetadata.self, structured) }
            self = .message(message)
        case "tool_call":
            self = .toolCall(ToolInvocation(
                id: ToolInvocationID(rawValue: try fields.string("id")), toolName: try fields.string("tool"), arguments: try fields.string("args"),
                threadID: fields.optionalString("thread").map(AgentThreadID.init(rawValue:)), turnID: fields.optionalString("turn").map(AgentTurnID.init(rawValue:))
            ))
        case "tool_result":
            guard let status = ToolResultEnvelope.Status(rawValue: try fields.string("status")), case .array(let blocks)? = row["content"] else {
                throw Self.undecodable("has an invalid tool result")
            }
            var content: [ToolResultContent] = []
            for block in blocks {
                if case .string(let text)? = block["text"] {
                    content.append(.text(text))
                } else if case .string(let link)? = block["image"], let url = URL(string: link) {
                    content.append(.image(url))
                } else {
                    throw Self.undecodable("has an invalid tool result block")
                }
            }
            var session: ToolSessionDescriptor?
            if case .object(let object)? = row["session"], case .string(let id)? = object["id"] {
                var title: String?
                if case .string(let value)? = object["title"] { title = value }
                session = ToolSessionDescriptor(id: id, title: title)
            }
            self = .toolResult(ToolResultEnvelope(
                invocationID: ToolInvocationID(rawValue: try fields.string("id")), toolName: try fields.string("tool"), status: status,
                content: content, session: session
            ))
        case "reasoning":
            guard case .array(let summary)? = row["summary"] else { throw Self.undecodable("has an invalid reasoning item") }
            let texts = try summary.map { value throws(AgentRuntimeError) -> String in
                guard case .string(let text) = value else { throw Self.undecodable("has an invalid reasoning summary") }
                return text
            }
            self = .reasoning(AgentReasoningItem(itemID: try fields.string("id"), summary: texts, encryptedContent: fields.optionalString("enc")))
        case "system_event":
            self = .systemEvent(AgentSystemEvent(
                type: AgentSystemEventType(rawValue: try fields.string("type")), turnID: AgentTurnID(rawValue: try fields.string("turn")),
                occurredAt: try fields.date("at"), errorCode: fields.optionalString("error")
            ))
        case "compaction":
            guard let record = row["record"] else { throw Self.undecodable("has an invalid compaction record") }
            self = .contextCompaction(try Self.decode(AgentContextCompaction.self, record))
        default:
            throw Self.undecodable("has an unknown kind")
        }
    }

    private struct RowFields {
        let row: JSONObject

        func string(_ key: String) throws(AgentRuntimeError) -> String {
            guard case .string(let value)? = row[key] else { throw AgentHistoryItem.undecodable("lacks a field") }
            return value
        }

        func optionalString(_ key: String) -> String? {
            if case .string(let value)? = row[key] { return value }
            return nil
        }

        func date(_ key: String) throws(AgentRuntimeError) -> Date {
            guard case .number(let number)? = row[key] else { throw AgentHistoryItem.undecodable("lacks a date") }
            return Date(timeIntervalSinceReferenceDate: number.doubleValue)
        }
    }

    private static func date(_ date: Date) -> JSONValue {
        .number(JSONNumber(date.timeIntervalSinceReferenceDate) ?? JSONNumber(0))
    }

    /// Rare nested values use Foundation's coders on both sides (base64 data, default date strategy).
    private static func codable(_ value: some Encodable) -> JSONValue {
        guard let data = try? JSONEncoder().encode(value), let parsed = try? JSONValue(parsing: Array(data)) else { return .null }
        return parsed
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ value: JSONValue) throws(AgentRuntimeError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(value.canonicalBytes()))
        } catch {
            throw undecodable("has an invalid nested value")
        }
    }

    fileprivate static func undecodable(_ problem: String) -> AgentRuntimeError {
        AgentRuntimeError(code: .storageFailure, message: "a stored history item \(problem)")
    }
}
