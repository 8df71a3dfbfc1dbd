import CodexCore
import CodexSchema
import Foundation

/// The JSON shapes of the `threads` commands (keys in snake_case, documented in Docs/CLI.md), and the
/// formats `threads export` writes: JSON Lines (one object per history item, a `type` on every line) or
/// Markdown (a readable transcript).
enum ThreadExport {
    /// The export formats.
    enum Format: String {
        case jsonl, markdown
    }

    /// `2026-12-01T19:14:05Z`.
    private static func date(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// A thread as `threads list` and `threads show` print it.
    static func thread(_ thread: AgentThread) -> JSONValue {
        var object: JSONObject = [
            "id": .string(thread.id.rawValue), "title": thread.title.map(JSONValue.string) ?? .null, "status": .string(thread.status.rawValue),
            "created_at": .string(date(thread.createdAt)), "updated_at": .string(date(thread.updatedAt)),
            "model": thread.configuration.model.map { .string($0.rawValue) } ?? .null,
            "reasoning_effort": thread.configuration.reasoningEffort.map { .string($0.rawValue) } ?? .null,
            "skill_ids": .array(thread.skillIDs.map(JSONValue.string)),
        ]
        if let binding = thread.accountBinding { object["account_binding"] = .string(binding) }
        return .object(object)
    }

    /// A turn as `threads show` prints it.
    static func turn(_ turn: AgentTurn) -> JSONValue {
        var object: JSONObject = [
            "id": .string(turn.id.rawValue), "status": .string(turn.status.rawValue), "execution_mode": .string(turn.executionMode.rawValue),
            "started_at": .string(date(turn.startedAt)), "finished_at": turn.finishedAt.map { .string(date($0)) } ?? .null,
        ]
        if let usage = turn.usage {
            object["usage"] = [
                "input_tokens": usage.inputTokens.map { .number(JSONNumber($0)) } ?? .null,
                "output_tokens": usage.outputTokens.map { .number(JSONNumber($0)) } ?? .null,
                "total_tokens": usage.derivedTotalTokens.map { .number(JSONNumber($0)) } ?? .null,
            ]
        }
        if let failure = turn.failure { object["error"] = ["code": .string(failure.code.rawValue), "message": .string(failure.message)] }
        return .object(object)
    }

    /// One history item as a JSON Lines object.
    static func jsonLine(_ item: AgentHistoryItem) -> JSONValue {
        switch item {
        case .message(let message):
            var object: JSONObject = [
                "type": "message", "id": .string(message.id.rawValue), "role": .string(message.role.rawValue), "text": .string(message.text),
                "created_at": .string(date(message.createdAt)),
            ]
            if let phase = message.phase { object["phase"] = .string(phase.wireName) }
            if !message.images.isEmpty {
                object["images"] = .array(message.images.map { ["id": .string($0.id.rawValue), "media_type": .string($0.mimeType), "bytes": .number(JSONNumber($0.data.count))] })
            }
            if let structured = message.structuredOutput { object["structured_output_format"] = .string(structured.formatName) }
            return .object(object)
        case .toolCall(let call):
            var object: JSONObject = ["type": "tool_call", "call_id": .string(call.id.rawValue), "tool": .string(call.toolName), "arguments": .string(call.arguments)]
            if let turn = call.turnID { object["turn_id"] = .string(turn.rawValue) }
            return .object(object)
        case .toolResult(let result):
            let content: [JSONValue] = result.content.map { part in
                switch part {
                case .text(let text): ["type": "text", "text": .string(text)]
                case .image(let url): ["type": "image", "url": .string(url.absoluteString)]
                }
            }
            return ["type": "tool_result", "call_id": .string(result.invocationID.rawValue), "tool": .string(result.toolName), "status": .string(result.status.rawValue), "content": .array(content)]
        case .reasoning(let reasoning):
            return [
                "type": "reasoning", "item_id": .string(reasoning.itemID), "summary": .array(reasoning.summary.map(JSONValue.string)),
                "has_encrypted_content": .bool(reasoning.encryptedContent != nil),
            ]
        case .systemEvent(let event):
            var object: JSONObject = [
                "type": "system_event", "event": .string(event.type.rawValue), "turn_id": .string(event.turnID.rawValue),
                "occurred_at": .string(date(event.occurredAt)),
            ]
            if let code = event.errorCode { object["error_code"] = .string(code) }
            return .object(object)
        case .contextCompaction(let compaction):
            return [
                "type": "compaction", "id": .string(compaction.id), "strategy": .string(compaction.strategy.rawValue),
                "created_at": .string(date(compaction.createdAt)), "replaced_items": .number(JSONNumber(compaction.replacedItemCount)),
                "covers_items_before": .number(JSONNumber(compaction.coversItemsBefore)),
                "estimated_tokens_before": .number(JSONNumber(compaction.estimatedTokensBefore)),
                "estimated_tokens_after": .number(JSONNumber(compaction.estimatedTokensAfter)),
                "summary": compaction.summary.map(JSONValue.string) ?? .null, "provider_items": .number(JSONNumber(compaction.providerItems.count)),
            ]
        }
    }

    /// The Markdown heading of a thread's transcript: the title with Markdown's punctuation escaped, the
    /// ID as code.
    static func markdownHeading(_ thread: AgentThread) -> String {
        "# \(thread.title.map { literal(escape($0)) } ?? "Thread")\n\nThread \(codeSpan(escape(thread.id.rawValue))), updated \(date(thread.updatedAt)).\n"
    }

    /// One history item as Markdown (`nil` for items a transcript leaves out: turn bookkeeping).
    ///
    /// What a message, tool or model wrote never shapes the transcript: a message's text is quoted line
    /// by line under its speaker (so a line reading `**assistant**` or an unclosed code fence stays inside
    /// its own quote), and names and arguments are code spans whose fences are longer than any run of
    /// backticks inside them.
    static func markdown(_ item: AgentHistoryItem) -> String? {
        switch item {
        case .message(let message):
            let images = message.images.isEmpty ? "" : "\n\n_\(message.images.count) image\(message.images.count == 1 ? "" : "s") attached_"
            return "\n**\(message.role.rawValue)**\n\n\(quoted(withoutHTML(Console.displayText(message.text))))\(images)\n"
        case .toolCall(let call):
            return "\n> tool call \(codeSpan(escape(call.toolName))) \(codeSpan(escape(call.arguments)))\n"
        case .toolResult(let result):
            return "\n> tool result (\(result.status.rawValue)): \(withoutHTML(escape(result.joinedText)))\n"
        case .reasoning(let reasoning):
            return reasoning.summary.isEmpty ? nil : "\n> _thinking:_ \(withoutHTML(escape(reasoning.summary.joined(separator: " "))))\n"
        case .systemEvent(let event):
            return event.type == .turnInterrupted || event.type == .turnFailed ? "\n> _\(event.type.rawValue)_\n" : nil
        case .contextCompaction(let compaction):
            let summary = compaction.summary.map { "\n>\n> \(withoutHTML(escape($0)))" } ?? ""
            return "\n> _context compacted (\(compaction.strategy.rawValue)): \(compaction.replacedItemCount) earlier items replaced in later requests_\(summary)\n"
        }
    }

    /// One line of text with Markdown's line structure kept out (newlines become spaces) and control
    /// characters made visible.
    private static func escape(_ text: String) -> String {
        Console.display(text.replacingOccurrences(of: "\n", with: " "))
    }

    /// `text` with raw HTML kept out: `<` and `&` backslash-escaped, so a `</blockquote>` or an entity in
    /// content shows as written instead of closing the quote around it in a renderer that passes HTML.
    static func withoutHTML(_ text: String) -> String {
        backslashed(text, "<&")
    }

    /// `text` as a block quote: every line behind `> ` (an empty line as `>`), so nothing in it can end
    /// the quote or reach the lines around it.
    static func quoted(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? ">" : "> " + $0 }.joined(separator: "\n")
    }

    /// `text` as a code span: fenced by one backtick more than its longest run of backticks, with a space
    /// inside each fence when it starts or ends with one (CommonMark strips one such space).
    static func codeSpan(_ text: String) -> String {
        var longest = 0
        var run = 0
        for character in text {
            run = character == "`" ? run + 1 : 0
            longest = max(longest, run)
        }
        let fence = String(repeating: "`", count: longest + 1)
        let pad = text.hasPrefix("`") || text.hasSuffix("`") || text.isEmpty ? " " : ""
        return fence + pad + text + pad + fence
    }

    /// `text` with the punctuation Markdown gives a meaning inside a heading backslash-escaped (emphasis,
    /// code, links and images, HTML and entities, a closing `#`, strikethrough), so it shows as written.
    static func literal(_ text: String) -> String {
        backslashed(text, "\\`*_[]<>!&#~")
    }

    /// `text` with a backslash before each of `characters` (CommonMark's escape for ASCII punctuation).
    private static func backslashed(_ text: String, _ characters: String) -> String {
        guard text.contains(where: characters.contains) else { return text }
        var result = ""
        for character in text {
            if characters.contains(character) { result.append("\\") }
            result.append(character)
        }
        return result
    }
}
