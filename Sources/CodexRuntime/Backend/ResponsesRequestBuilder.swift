import CodexCore
import CodexSchema
import CodexTransport

/// Builds the Responses request of a turn's first model pass from an ``CodexCore/AgentBackendTurnRequest``.
///
/// Input order: the replayed history, then the request's developer messages (context, turn policy), then
/// the user message, then the response contract as a developer message. Later passes append the pass's
/// output items and the tool results (see ``ResponsesTurnRunner``).
enum ResponsesRequestBuilder {
    /// `reasoning.encrypted_content`: lets reasoning items be replayed with `store: false`.
    static let encryptedReasoningInclude = "reasoning.encrypted_content"

    /// The request of the first pass.
    static func request(for turn: AgentBackendTurnRequest, configuration: CodexResponsesBackendConfiguration) -> ResponsesRequest {
        let instructions = turn.compiledInstructions(base: configuration.instructions)
        var request = ResponsesRequest(model: turn.model.rawValue, instructions: instructions, input: input(for: turn))
        request.store = false
        request.stream = true
        // Like Codex: reasoning (with the resolved effort) for models the catalog knows, when an effort is
        // asked for, or when summaries are enabled (whatever the model: the model's output decides whether
        // they arrive); encrypted reasoning is included exactly when reasoning is sent.
        let info = CodexModelCatalog.bundled.info(for: turn.model)
        let summaries = configuration.enableReasoningSummaries
        if info != nil || turn.reasoningEffort != nil || summaries {
            let effort = info.map { $0.resolveEffort(turn.reasoningEffort) } ?? turn.reasoningEffort
            request.reasoning = .init(effort: effort, summary: summaries ? "auto" : nil)
            request.include = [encryptedReasoningInclude]
        } else {
            request.include = []
        }
        request.tools = turn.tools.map(ResponsesTool.init)
        if configuration.enableImageGeneration {
            request.tools.append(.imageGeneration(outputFormat: configuration.imageGenerationOutputFormat))
        }
        request.toolChoice = .auto
        request.parallelToolCalls = turn.tools.contains(where: \.supportsParallelExecution)
        request.textFormat = turn.responseFormat.map(ResponsesRequest.TextFormat.init)
        request.promptCacheKey = turn.threadID.rawValue
        return request
    }

    /// The input items of the first pass, in order.
    static func input(for turn: AgentBackendTurnRequest) -> [ResponsesInputItem] {
        var items = replayed(turn.history)
        items.append(contentsOf: turn.request.developerMessages.map(ResponsesInputItem.developer))
        if !turn.request.text.isEmpty || !turn.request.images.isEmpty {
            items.append(.user(turn.request.text, images: turn.request.images))
        }
        if let contract = turn.responseContract, !contract.isEmpty {
            items.append(.message(role: .developer, content: [.inputText(contract)]))
        }
        return items
    }

    /// The input items of a history: from its latest compaction record on (a compaction's replacement
    /// stands for everything before it).
    static func replayed(_ history: [AgentHistoryItem]) -> [ResponsesInputItem] {
        AgentContextEstimator.replayedItems(history).flatMap(items(for:))
    }

    /// One history entry as input items: none for entries that are not sent (system events, empty
    /// messages, roles the Responses API does not take); a compaction's replacement in full.
    static func items(for entry: AgentHistoryItem) -> [ResponsesInputItem] {
        if case .contextCompaction(let compaction) = entry {
            if let summary = compaction.summary {
                return [.message(role: .developer, content: [.inputText(AgentContextCompaction.summaryMessage(summary))])]
            }
            // Only documented item types: a replacement stored before replies were checked may hold others.
            return compaction.providerItems.filter(ResponsesCompactionReply.isReplayable).map(ResponsesInputItem.raw)
        }
        return item(for: entry).map { [$0] } ?? []
    }

    /// One history entry (not a compaction) as an input item, or `nil` when it is not sent.
    private static func item(for entry: AgentHistoryItem) -> ResponsesInputItem? {
        switch entry {
        case .message(let message):
            return item(for: message)
        case .toolCall(let invocation):
            return .functionCall(callID: invocation.id.rawValue, name: invocation.toolName, arguments: invocation.arguments)
        case .toolResult(let envelope):
            return .toolResult(envelope)
        case .reasoning(let reasoning):
            // With `store: false` a reasoning item is only resolvable through its encrypted content.
            guard let encrypted = reasoning.encryptedContent, !encrypted.isEmpty else { return nil }
            return .reasoning(summary: reasoning.summary, encryptedContent: encrypted)
        case .systemEvent, .contextCompaction:
            return nil
        }
    }

    /// A stored message as an input item. Assistant text is replayed as `output_text` with its phase;
    /// assistant images (generated ones) are not sent back. System messages are sent as developer
    /// messages.
    static func item(for message: AgentMessage) -> ResponsesInputItem? {
        switch message.role {
        case .user:
            guard !message.text.isEmpty || !message.images.isEmpty else { return nil }
            return .user(message.text, images: message.images)
        case .assistant:
            guard !message.text.isEmpty else { return nil }
            return .message(role: .assistant, content: [.outputText(message.text)], phase: message.phase)
        case .developer, .system:
            guard !message.text.isEmpty else { return nil }
            return .message(role: .developer, content: [.inputText(message.text)])
        default:
            return nil
        }
    }
}
