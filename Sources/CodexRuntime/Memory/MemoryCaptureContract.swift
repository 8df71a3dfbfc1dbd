import CodexCore
import CodexSchema
import Foundation

/// The fixed instruction, JSON contract and transcript rendering of a memory capture request.
enum MemoryCaptureContract {
    /// The instruction the capture request sends.
    static let instruction = """
        You extract durable memories from a conversation between a user and an assistant: facts about the \
        user or their work, stated preferences, decisions and standing instructions that will still matter \
        in later conversations. Skip small talk, one-off requests and anything only true for this moment. \
        Never record credentials, secrets or personal data the user did not ask to be remembered. Each \
        memory is one self-contained sentence. Give each a short stable key naming what it is about (for \
        example "delivery-day"), so that a later change to the same fact reuses the key. Return no memories \
        when nothing qualifies.
        """

    /// The contract's format name.
    static let formatName = "memory_capture"
    /// The longest summary a captured memory may have, in characters.
    static let summaryCharacters = 2_000
    /// The longest key, in characters.
    static let keyCharacters = 128
    /// The most characters of transcript one capture sends.
    static let transcriptCharacters = 24_000

    /// The contract for at most `maximum` memories.
    static func format(maximum: Int) -> AgentStructuredOutputFormat {
        let memory: JSONValue = [
            "type": "object",
            "properties": [
                "key": ["type": "string", "minLength": 1, "maxLength": .number(JSONNumber(keyCharacters))],
                "summary": ["type": "string", "minLength": 1, "maxLength": .number(JSONNumber(summaryCharacters))],
                "category": ["type": "string", "enum": ["fact", "preference", "decision", "instruction"]],
                "importance": ["type": "integer", "minimum": 0, "maximum": 10],
                "tags": ["type": "array", "items": ["type": "string", "minLength": 1, "maxLength": 64], "maxItems": 8],
                "evidence": ["type": "string", "maxLength": 500],
            ],
            "required": ["key", "summary", "category", "importance", "tags", "evidence"],
            "additionalProperties": false,
        ]
        return AgentStructuredOutputFormat(
            name: formatName, description: "Durable memories from the conversation.",
            rawSchema: [
                "type": "object",
                "properties": ["memories": ["type": "array", "items": memory, "maxItems": .number(JSONNumber(maximum))]],
                "required": ["memories"],
                "additionalProperties": false,
            ]
        )
    }

    /// A validated capture reply.
    struct Payload: Decodable {
        struct Memory: Decodable {
            let key: String
            let summary: String
            let category: String
            let importance: Int
            let tags: [String]
            let evidence: String
        }

        let memories: [Memory]
    }

    /// The conversation as the capture request's user text: `User:` and `Assistant:` blocks, oldest
    /// first, keeping the most recent ones that fit ``transcriptCharacters``.
    static func transcript(_ messages: [AgentMessage]) -> String {
        var blocks: [String] = []
        var used = 0
        for message in messages.reversed() {
            let label: String
            switch message.role {
            case .user: label = "User"
            case .assistant: label = "Assistant"
            default: continue
            }
            let text = message.text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { continue }
            let room = transcriptCharacters - used
            guard room > 0 else { break }
            let kept = text.count > room ? String(text.suffix(room)) : text
            blocks.append("\(label): \(kept)")
            used += kept.count
        }
        return "Conversation:\n\n" + blocks.reversed().joined(separator: "\n\n")
    }

    /// A model's key as a dedupe key: lowercased, trimmed, inner whitespace as `-`.
    static func dedupeKey(_ key: String) -> String {
        key.lowercased().split(whereSeparator: \.isWhitespace).joined(separator: "-")
    }
}
