public import CodexCore
public import CodexSchema

/// What the Responses stream reports about the response as a whole.
public struct ResponsesResponseInfo: Sendable, Hashable {
    /// The response ID.
    public var id: String?
    /// The model that served it.
    public var model: String?
    /// `in_progress`, `completed`, `failed`, `incomplete`, …
    public var status: String?
    /// Token usage (on `response.completed`).
    public var usage: AgentUsage?
    /// The provider's error code (on `response.failed`).
    public var errorCode: String?
    /// The provider's error message (on `response.failed`).
    public var errorMessage: String?
    /// Why the response is incomplete (on `response.incomplete`).
    public var incompleteReason: String?

    /// Creates response info.
    public init(
        id: String? = nil, model: String? = nil, status: String? = nil, usage: AgentUsage? = nil,
        errorCode: String? = nil, errorMessage: String? = nil, incompleteReason: String? = nil
    ) {
        self.id = id
        self.model = model
        self.status = status
        self.usage = usage
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.incompleteReason = incompleteReason
    }
}

/// One decoded Responses stream event. Open: event types this version does not model are kept as
/// ``Kind/unknown(type:raw:)`` and never end the stream.
public struct ResponsesStreamEvent: Sendable, Hashable {
    /// The event's `sequence_number`, when present.
    public var sequenceNumber: Int?
    /// What happened.
    public var kind: Kind

    /// Creates an event.
    public init(sequenceNumber: Int?, kind: Kind) {
        self.sequenceNumber = sequenceNumber
        self.kind = kind
    }

    /// The event kinds. The rare kinds with large payloads are `indirect` (boxed), so the hot delta
    /// events stay small to copy.
    public enum Kind: Sendable, Hashable {
        /// `response.created`.
        indirect case created(ResponsesResponseInfo)
        /// `response.in_progress`.
        indirect case inProgress(ResponsesResponseInfo)
        /// `response.queued`.
        indirect case queued(ResponsesResponseInfo)
        /// `response.output_item.added`.
        indirect case outputItemAdded(outputIndex: Int, item: ResponsesOutputItem)
        /// `response.output_item.done`: the authoritative item to record.
        indirect case outputItemDone(outputIndex: Int, item: ResponsesOutputItem)
        /// `response.content_part.added`.
        case contentPartAdded(itemID: String, outputIndex: Int, contentIndex: Int)
        /// `response.content_part.done`.
        case contentPartDone(itemID: String, outputIndex: Int, contentIndex: Int)
        /// `response.output_text.delta`: answer text.
        case outputTextDelta(itemID: String, outputIndex: Int, contentIndex: Int, delta: String)
        /// `response.output_text.done`: the part's full text.
        case outputTextDone(itemID: String, outputIndex: Int, contentIndex: Int, text: String)
        /// `response.refusal.delta`.
        case refusalDelta(itemID: String, outputIndex: Int, delta: String)
        /// `response.reasoning_summary_part.added`.
        case reasoningSummaryPartAdded(itemID: String, outputIndex: Int, summaryIndex: Int)
        /// `response.reasoning_summary_part.done`.
        case reasoningSummaryPartDone(itemID: String, outputIndex: Int, summaryIndex: Int)
        /// `response.reasoning_summary_text.delta`.
        case reasoningSummaryTextDelta(itemID: String, outputIndex: Int, summaryIndex: Int, delta: String)
        /// `response.reasoning_summary_text.done`.
        case reasoningSummaryTextDone(itemID: String, outputIndex: Int, summaryIndex: Int, text: String)
        /// `response.reasoning_text.delta` (raw reasoning of open models).
        case reasoningTextDelta(itemID: String, outputIndex: Int, contentIndex: Int, delta: String)
        /// `response.function_call_arguments.delta`.
        case functionCallArgumentsDelta(itemID: String, outputIndex: Int, delta: String)
        /// `response.function_call_arguments.done`.
        case functionCallArgumentsDone(itemID: String, outputIndex: Int, arguments: String)
        /// `response.custom_tool_call_input.delta`.
        case customToolCallInputDelta(itemID: String, callID: String?, delta: String)
        /// `response.web_search_call.{in_progress,searching,completed}`; `status` is the last word.
        case webSearchCall(itemID: String, outputIndex: Int, status: String)
        /// `response.image_generation_call.{in_progress,generating,partial_image,completed}`.
        case imageGenerationCall(itemID: String, outputIndex: Int, status: String, partialImageBase64: String?)
        /// `response.completed`: the only successful end.
        indirect case completed(ResponsesResponseInfo)
        /// `response.failed`.
        indirect case failed(ResponsesResponseInfo)
        /// `response.incomplete`.
        indirect case incomplete(ResponsesResponseInfo)
        /// `error`.
        indirect case error(code: String?, type: String?, message: String?, param: String?)
        /// `codex.rate_limits`.
        case rateLimits([AgentRateLimitSnapshot])
        /// Any other event, with its raw JSON.
        case unknown(type: String, raw: JSONValue)
    }

    /// Whether the event ends the response (`completed`, `failed` or `incomplete`).
    public var isTerminal: Bool {
        switch kind {
        case .completed, .failed, .incomplete: return true
        default: return false
        }
    }

    /// The wire type name of the event (`response.output_text.delta`, …; the raw type for unknown ones).
    public var typeName: String {
        switch kind {
        case .created: return "response.created"
        case .inProgress: return "response.in_progress"
        case .queued: return "response.queued"
        case .outputItemAdded: return "response.output_item.added"
        case .outputItemDone: return "response.output_item.done"
        case .contentPartAdded: return "response.content_part.added"
        case .contentPartDone: return "response.content_part.done"
        case .outputTextDelta: return "response.output_text.delta"
        case .outputTextDone: return "response.output_text.done"
        case .refusalDelta: return "response.refusal.delta"
        case .reasoningSummaryPartAdded: return "response.reasoning_summary_part.added"
        case .reasoningSummaryPartDone: return "response.reasoning_summary_part.done"
        case .reasoningSummaryTextDelta: return "response.reasoning_summary_text.delta"
        case .reasoningSummaryTextDone: return "response.reasoning_summary_text.done"
        case .reasoningTextDelta: return "response.reasoning_text.delta"
        case .functionCallArgumentsDelta: return "response.function_call_arguments.delta"
        case .functionCallArgumentsDone: return "response.function_call_arguments.done"
        case .customToolCallInputDelta: return "response.custom_tool_call_input.delta"
        case .webSearchCall(_, _, let status): return "response.web_search_call.\(status)"
        case .imageGenerationCall(_, _, let status, _): return "response.image_generation_call.\(status)"
        case .completed: return "response.completed"
        case .failed: return "response.failed"
        case .incomplete: return "response.incomplete"
        case .error: return "error"
        case .rateLimits: return "codex.rate_limits"
        case .unknown(let type, _): return type
        }
    }
}
