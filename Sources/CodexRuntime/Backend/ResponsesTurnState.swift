import CodexCore
import CodexSchema
import CodexTransport
import Foundation

/// What one turn of the Responses backend has seen so far, and the mapping of Responses stream events
/// to ``CodexCore/AgentBackendEvent``s. A plain value driven by ``ResponsesTurnRunner``: no I/O.
struct ResponsesTurnState {
    /// What one model pass collected.
    struct Pass {
        /// Keys (item ID, else output index) of the output items seen in this pass.
        var itemKeys: Set<String> = []
        /// Items already completed (`output_item.done` repeated by a server is ignored).
        var doneKeys: Set<String> = []
        /// The function calls, in the model's order.
        var functionCalls: [ResponsesOutputItem.FunctionCall] = []
        /// The pass's output replayed into the next pass's input, in output order: reasoning items,
        /// assistant messages and function calls.
        var replayItems: [ResponsesInputItem] = []
    }

    let threadID: AgentThreadID
    let turnID: AgentTurnID
    /// The output-item budget of the turn.
    let maximumItems: Int

    private(set) var pass = Pass()
    private var turnStarted = false
    private var itemCount = 0
    private var emittedImageKeys: Set<String> = []
    private(set) var lastAssistantMessage: AgentMessage?
    private(set) var usage: AgentUsage?
    private(set) var lastResponseID: String?

    init(threadID: AgentThreadID, turnID: AgentTurnID, maximumItems: Int) {
        self.threadID = threadID
        self.turnID = turnID
        self.maximumItems = maximumItems
    }

    /// Starts a new model pass.
    mutating func beginPass() {
        pass = Pass()
    }

    /// The summary of a successful turn.
    func summary() -> AgentTurnSummary {
        AgentTurnSummary(turnID: turnID, threadID: threadID, finalMessage: lastAssistantMessage, usage: usage, responseID: lastResponseID)
    }

    /// The backend events for one stream event, recording what later passes and the summary need.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `execution_limit_exceeded` (`.responseItems`) when the
    ///   event brings an output item past the budget.
    mutating func map(_ event: ResponsesStreamEvent, log: (AgentLogEvent) -> Void) throws(AgentRuntimeError) -> [AgentBackendEvent] {
        switch event.kind {
        case .created(let info):
            lastResponseID = info.id ?? lastResponseID
            guard !turnStarted else { return [] }
            turnStarted = true
            return [.turnStarted(turnID)]
        case .outputTextDelta(_, _, _, let delta):
            return delta.isEmpty ? [] : [.assistantMessageDelta(delta)]
        case .reasoningSummaryTextDelta(let itemID, _, let summaryIndex, let delta):
            return [.progress(.reasoningSummaryDelta(itemID: itemID, summaryIndex: summaryIndex, delta: delta))]
        case .webSearchCall(let itemID, _, let status):
            return [.progress(.webSearch(itemID: itemID, status: status, query: nil))]
        case .rateLimits(let snapshots):
            return snapshots.isEmpty ? [] : [.rateLimitsUpdated(snapshots)]
        case .outputItemAdded(let outputIndex, let item):
            try count(item, outputIndex: outputIndex)
            return added(item, outputIndex: outputIndex, log: log)
        case .outputItemDone(let outputIndex, let item):
            try count(item, outputIndex: outputIndex)
            guard pass.doneKeys.insert(Self.key(item, outputIndex: outputIndex)).inserted else { return [] }
            return done(item, outputIndex: outputIndex, log: log)
        case .completed(let info):
            lastResponseID = info.id ?? lastResponseID
            guard let passUsage = info.usage else { return [] }
            usage = usage.map { $0 + passUsage } ?? passUsage
            return [.usageUpdated(passUsage)]
        default:
            return []
        }
    }

    // MARK: - Output items

    /// Counts an output item against the budget the first time it is seen.
    private mutating func count(_ item: ResponsesOutputItem, outputIndex: Int) throws(AgentRuntimeError) {
        let key = Self.key(item, outputIndex: outputIndex)
        guard pass.itemKeys.insert(key).inserted else { return }
        itemCount += 1
        if itemCount > maximumItems { throw AgentRuntimeError.executionLimitExceeded(.responseItems) }
    }

    private static func key(_ item: ResponsesOutputItem, outputIndex: Int) -> String {
        if let id = item.id, !id.isEmpty { return "id:" + id }
        return "index:\(outputIndex)"
    }

    private mutating func added(_ item: ResponsesOutputItem, outputIndex: Int, log: (AgentLogEvent) -> Void) -> [AgentBackendEvent] {
        switch item {
        case .message(let message):
            return [.progress(.messageStarted(itemID: message.id, phase: message.phase))]
        case .imageGenerationCall(let image):
            return imageMessage(image, outputIndex: outputIndex, log: log)
        default:
            return []
        }
    }

    private mutating func done(_ item: ResponsesOutputItem, outputIndex: Int, log: (AgentLogEvent) -> Void) -> [AgentBackendEvent] {
        switch item {
        case .message(let message):
            var events: [AgentBackendEvent] = []
            // A refusal is shown as the message's text but replayed as a refusal, not as an answer.
            let refusal = message.text.isEmpty ? message.refusal.flatMap { $0.isEmpty ? nil : $0 } : nil
            let text = refusal ?? message.text
            if !text.isEmpty {
                let completed = AgentMessage(threadID: threadID, role: .assistant, text: text, phase: message.phase)
                lastAssistantMessage = completed
                events.append(.assistantMessageCompleted(completed))
                let part: ResponsesContentPart = refusal.map { .refusal($0) } ?? .outputText(text)
                pass.replayItems.append(.message(role: .assistant, content: [part], phase: message.phase))
            }
            events.append(.progress(.messageCompleted(itemID: message.id, phase: message.phase)))
            return events
        case .reasoning(let reasoning):
            // With `store: false` a reasoning item is only resolvable through its encrypted content.
            if let encrypted = reasoning.encryptedContent, !encrypted.isEmpty {
                pass.replayItems.append(.reasoning(summary: reasoning.summary, encryptedContent: encrypted))
            }
            return [.reasoningCompleted(AgentReasoningItem(itemID: reasoning.id, summary: reasoning.summary, encryptedContent: reasoning.encryptedContent))]
        case .functionCall(let call):
            pass.functionCalls.append(call)
            pass.replayItems.append(.functionCall(callID: call.callID, name: call.name, arguments: call.arguments, namespace: call.namespace))
            return []
        case .webSearchCall(let id, let status, let action):
            return [.progress(.webSearch(itemID: id, status: status ?? "completed", query: action?["query"]?.stringValue))]
        case .imageGenerationCall(let image):
            return imageMessage(image, outputIndex: outputIndex, log: log)
        default:
            return []
        }
    }

    // MARK: - Generated images

    /// An assistant message with the generated image, the first time an item carries a decodable
    /// result (its status may still be `generating`). Invalid or oversized results are skipped and logged.
    private mutating func imageMessage(_ image: ResponsesOutputItem.ImageGeneration, outputIndex: Int, log: (AgentLogEvent) -> Void) -> [AgentBackendEvent] {
        let key: String? = image.id.isEmpty ? "index:\(outputIndex)" : image.id
        guard let base64 = image.resultBase64, !base64.isEmpty else { return [] }
        if let key, emittedImageKeys.contains(key) { return [] }
        guard let data = Data(base64Encoded: base64), !data.isEmpty else {
            log(Self.imageSkipped(image.id, reason: "invalid_base64", message: "a generated image's result is not valid base64; it was skipped"))
            return []
        }
        guard data.count <= AgentImageAttachment.maximumByteCount else {
            log(Self.imageSkipped(image.id, reason: "too_large", message: "a generated image is larger than the attachment limit; it was skipped"))
            return []
        }
        if let key { emittedImageKeys.insert(key) }
        let metadata = AgentImageAttachment.GenerationMetadata(
            revisedPrompt: image.revisedPrompt, size: image.size, quality: image.quality, outputFormat: image.outputFormat,
            background: image.background
        )
        let mimeType = AgentImageAttachment.sniffMimeType(data) ?? Self.mimeType(forOutputFormat: image.outputFormat) ?? "image/png"
        let attachment = AgentImageAttachment(data: data, mimeType: mimeType, generationMetadata: metadata)
        let message = AgentMessage(threadID: threadID, role: .assistant, text: "", images: [attachment])
        lastAssistantMessage = message
        return [.assistantMessageCompleted(message)]
    }

    /// The media type of an image generation `output_format` (`png`, `jpeg`, `webp`, …), or `nil`.
    static func mimeType(forOutputFormat format: String?) -> String? {
        switch format?.lowercased() {
        case "png": return "image/png"
        case "jpeg", "jpg": return "image/jpeg"
        case "webp": return "image/webp"
        case "gif": return "image/gif"
        default: return nil
        }
    }

    private static func imageSkipped(_ itemID: String, reason: String, message: String) -> AgentLogEvent {
        AgentLogEvent(
            level: .warning, category: .runtime, name: "backend.image_generation.skipped", message: message,
            metadata: ["item_id": itemID, "reason": reason]
        )
    }
}
