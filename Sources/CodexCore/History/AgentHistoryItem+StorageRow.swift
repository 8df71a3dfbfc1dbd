import Foundation

/// The storage row of a history item: the binary form of ``StorageRowFormat``, written and read field by
/// field with no parser and no intermediate values, because restoring a thread reads every row. Rows
/// written before the binary form (compact JSON) are still read. Rare nested values (image attachments,
/// structured-output metadata) are stored as their `Codable` JSON, read with Foundation's decoder.
extension AgentHistoryItem {
    /// The kind column a store keeps beside the row: `message`, `tool_call`, `tool_result`, `reasoning`,
    /// `system_event`, `compaction`.
    package var storageKind: String {
        switch self {
        case .message: "message"
        case .toolCall: "tool_call"
        case .toolResult: "tool_result"
        case .reasoning: "reasoning"
        case .systemEvent: "system_event"
        case .contextCompaction: "compaction"
        }
    }

    /// The item as a binary storage row.
    package func storageRow() -> [UInt8] {
        switch self {
        case .message(let message):
            var row = StorageRowWriter(kind: StorageRowFormat.Kind.message, capacity: 64 + message.text.utf8.count)
            row.string(message.id.rawValue)
            row.string(message.threadID.rawValue)
            row.string(message.role.rawValue)
            row.string(message.text)
            row.optionalString(message.phase?.wireName)
            row.date(message.createdAt)
            row.optionalBytes(message.images.isEmpty ? nil : Self.codable(message.images))
            row.optionalBytes(message.structuredOutput.map(Self.codable))
            return row.bytes
        case .toolCall(let call):
            var row = StorageRowWriter(kind: StorageRowFormat.Kind.toolCall, capacity: 48 + call.arguments.utf8.count)
            row.string(call.id.rawValue)
            row.string(call.toolName)
            row.string(call.arguments)
            row.optionalString(call.threadID?.rawValue)
            row.optionalString(call.turnID?.rawValue)
            return row.bytes
        case .toolResult(let result):
            var row = StorageRowWriter(kind: StorageRowFormat.Kind.toolResult, capacity: 128)
            row.string(result.invocationID.rawValue)
            row.string(result.toolName)
            row.string(result.status.rawValue)
            row.count(result.content.count)
            for block in result.content {
                switch block {
                case .text(let text):
                    row.byte(0)
                    row.string(text)
                case .image(let url):
                    row.byte(1)
                    row.string(url.absoluteString)
                }
            }
            row.flag(result.session != nil)
            if let session = result.session {
                row.string(session.id)
                row.optionalString(session.title)
            }
            return row.bytes
        case .reasoning(let reasoning):
            var row = StorageRowWriter(kind: StorageRowFormat.Kind.reasoning, capacity: 64 + (reasoning.encryptedContent?.utf8.count ?? 0))
            row.string(reasoning.itemID)
            row.count(reasoning.summary.count)
            for text in reasoning.summary { row.string(text) }
            row.optionalString(reasoning.encryptedContent)
            return row.bytes
        case .systemEvent(let event):
            // An event with a memory application has a kind of its own, so every truncation of its row
            // is detected; events without one keep the earlier form.
            let kind = event.memoryApplication == nil ? StorageRowFormat.Kind.systemEvent : StorageRowFormat.Kind.systemEventWithMemory
            var row = StorageRowWriter(kind: kind, capacity: 64)
            row.string(event.type.rawValue)
            row.string(event.turnID.rawValue)
            row.date(event.occurredAt)
            row.optionalString(event.errorCode)
            if let application = event.memoryApplication { row.optionalBytes(Self.codable(application)) }
            return row.bytes
        case .contextCompaction(let compaction):
            // Rare and nested (provider items): the record's Codable JSON.
            var row = StorageRowWriter(kind: StorageRowFormat.Kind.compaction, capacity: 256)
            row.optionalBytes(Self.codable(compaction))
            return row.bytes
        }
    }

    /// Reads a storage row written by ``storageRow()``, or a compact JSON row written before the binary form.
    /// - Throws: ``AgentRuntimeError`` `storage_failure` for a row that is neither.
    package init(storageRow bytes: [UInt8]) throws(AgentRuntimeError) {
        let decoded: Result<AgentHistoryItem, AgentRuntimeError> = bytes.withUnsafeBufferPointer { buffer in
            do throws(AgentRuntimeError) {
                return .success(try AgentHistoryItem(storageRow: buffer))
            } catch {
                return .failure(error)
            }
        }
        self = try decoded.get()
    }

    /// Reads a storage row in place; a thread identifier equal to `thread`'s is shared with it instead of
    /// being copied (a thread's rows all name it).
    /// - Throws: ``AgentRuntimeError`` `storage_failure` for a row that is neither form.
    package init(storageRow bytes: UnsafeBufferPointer<UInt8>, thread: AgentThreadID? = nil) throws(AgentRuntimeError) {
        guard let first = bytes.first else { throw Self.undecodable("is empty") }
        guard first == StorageRowFormat.binaryMarker else {
            try self.init(jsonStorageRow: bytes)
            return
        }
        var reader = StorageRowReader(bytes)
        self = try Self.read(&reader, thread: thread?.rawValue)
    }

    /// Reads the fields in order into locals, checks the row's end, then builds the item in one return
    /// expression. (Building the payload in a local and wrapping it afterwards compiled to a copy of the
    /// whole payload plus a destroy of the original: a retain and a release of every field, per row.)
    private static func read(_ row: inout StorageRowReader, thread: String?) throws(AgentRuntimeError) -> AgentHistoryItem {
        let kind = try row.byte()
        switch kind {
        case StorageRowFormat.Kind.message:
            let id = AgentMessageID(rawValue: try row.string())
            let threadID = AgentThreadID(rawValue: try row.string(reusing: thread))
            let role = AgentMessageRole(rawValue: try row.string())
            let text = try row.string()
            let phase = try row.optionalString().map(AgentMessagePhase.init(wireName:))
            let createdAt = try row.date()
            let images = try row.optionalBytes().map { bytes throws(AgentRuntimeError) in try decodeNested([AgentImageAttachment].self, bytes) } ?? []
            let structured = try row.optionalBytes().map { bytes throws(AgentRuntimeError) in try decodeNested(AgentStructuredOutputMetadata.self, bytes) }
            try row.finish()
            return .message(AgentMessage(
                id: id, threadID: threadID, role: role, text: text, images: images, phase: phase, structuredOutput: structured, createdAt: createdAt
            ))
        case StorageRowFormat.Kind.toolCall:
            let id = ToolInvocationID(rawValue: try row.string())
            let toolName = try row.string()
            let arguments = try row.string()
            let threadID = try row.optionalString(reusing: thread).map(AgentThreadID.init(rawValue:))
            let turnID = try row.optionalString().map(AgentTurnID.init(rawValue:))
            try row.finish()
            return .toolCall(ToolInvocation(id: id, toolName: toolName, arguments: arguments, threadID: threadID, turnID: turnID))
        case StorageRowFormat.Kind.toolResult:
            let invocation = ToolInvocationID(rawValue: try row.string())
            let tool = try row.string()
            guard let status = ToolResultEnvelope.Status(rawValue: try row.string()) else { throw undecodable("has an invalid tool result") }
            let blocks = try row.count()
            var content: [ToolResultContent] = []
            content.reserveCapacity(blocks)
            for _ in 0..<blocks {
                switch try row.byte() {
                case 0:
                    content.append(.text(try row.string()))
                case 1:
                    guard let url = URL(string: try row.string()) else { throw undecodable("has an invalid tool result block") }
                    content.append(.image(url))
                default:
                    throw undecodable("has an invalid tool result block")
                }
            }
            let session = try row.flag() ? ToolSessionDescriptor(id: try row.string(), title: try row.optionalString()) : nil
            try row.finish()
            return .toolResult(ToolResultEnvelope(invocationID: invocation, toolName: tool, status: status, content: content, session: session))
        case StorageRowFormat.Kind.reasoning:
            let id = try row.string()
            let count = try row.count()
            var summary: [String] = []
            summary.reserveCapacity(count)
            for _ in 0..<count { summary.append(try row.string()) }
            let encrypted = try row.optionalString()
            try row.finish()
            return .reasoning(AgentReasoningItem(itemID: id, summary: summary, encryptedContent: encrypted))
        case StorageRowFormat.Kind.systemEvent, StorageRowFormat.Kind.systemEventWithMemory:
            let type = AgentSystemEventType(rawValue: try row.string())
            let turnID = AgentTurnID(rawValue: try row.string())
            let occurredAt = try row.date()
            let errorCode = try row.optionalString()
            var application: AgentMemoryApplication?
            if kind == StorageRowFormat.Kind.systemEventWithMemory {
                guard let bytes = try row.optionalBytes() else { throw undecodable("has an invalid memory application") }
                application = try decodeNested(AgentMemoryApplication.self, bytes)
            }
            try row.finish()
            var event = AgentSystemEvent(type: type, turnID: turnID, occurredAt: occurredAt, errorCode: errorCode)
            event.memoryApplication = application
            return .systemEvent(event)
        case StorageRowFormat.Kind.compaction:
            guard let record = try row.optionalBytes() else { throw undecodable("has an invalid compaction record") }
            let compaction = try decodeNested(AgentContextCompaction.self, record)
            try row.finish()
            return .contextCompaction(compaction)
        default:
            throw undecodable("has an unknown kind")
        }
    }

    private static func decodeNested<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws(AgentRuntimeError) -> T {
        do {
            return try StoredDate.decoder().decode(T.self, from: Data(bytes))
        } catch {
            throw undecodable("has an invalid nested value")
        }
    }

    /// Rare nested values use Foundation's coders on both sides (base64 data, default date strategy), with
    /// sorted keys so equal items give equal rows. A value that cannot be encoded is stored as `null`,
    /// which reads back as an error, never as nothing.
    private static func codable(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else { return Array("null".utf8) }
        return Array(data)
    }
}
