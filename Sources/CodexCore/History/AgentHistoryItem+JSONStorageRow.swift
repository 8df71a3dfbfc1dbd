import CodexSchema
import Foundation

/// The compact JSON row form of a history item, read with CodexSchema's parser: the form every row had
/// before the binary one (``StorageRowFormat``). Databases written then are still read through here.
/// Rare nested values (image attachments, structured-output metadata) are `Codable` JSON in both forms.
extension AgentHistoryItem {
    /// Reads a compact JSON row (`{"k":"message",…}`), the form rows had before the binary one.
    /// - Throws: ``AgentRuntimeError`` `storage_failure` for a row that is not one.
    init(jsonStorageRow bytes: some Collection<UInt8>) throws(AgentRuntimeError) {
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
            if let images = row["images"] { message.images = try Self.decodeNested([AgentImageAttachment].self, images) }
            if let structured = row["structured"] { message.structuredOutput = try Self.decodeNested(AgentStructuredOutputMetadata.self, structured) }
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
            self = .contextCompaction(try Self.decodeNested(AgentContextCompaction.self, record))
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
            // A number beyond Double's range would be an infinite date, which the binary row rejects.
            guard case .number(let number)? = row[key], let date = StoredDate.date(sinceReferenceDate: number.doubleValue) else {
                throw AgentHistoryItem.undecodable("lacks a date (or holds one outside the years 0 to 9999)")
            }
            return date
        }
    }

    static func decodeNested<T: Decodable>(_ type: T.Type, _ value: JSONValue) throws(AgentRuntimeError) -> T {
        do {
            return try StoredDate.decoder().decode(T.self, from: Data(value.canonicalBytes()))
        } catch {
            throw undecodable("has an invalid nested value")
        }
    }

    static func undecodable(_ problem: String) -> AgentRuntimeError {
        AgentRuntimeError(code: .storageFailure, message: "a stored history item \(problem)")
    }
}
