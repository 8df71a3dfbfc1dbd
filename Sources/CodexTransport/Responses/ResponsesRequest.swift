public import CodexCore
public import CodexSchema

/// The body of a streamed `POST {base}/responses`, encoded canonically.
///
/// ```swift
/// var request = ResponsesRequest(model: "gpt-6-astra", instructions: "Be brief.")
/// request.input = [.message(role: .user, content: [.inputText("Hello")])]
/// request.reasoning = .init(effort: .low, summary: "auto")
/// let body = request.body() // canonical JSON bytes; equal requests give equal bytes
/// ```
public struct ResponsesRequest: Sendable, Hashable {
    /// The model slug.
    public var model: String
    /// Base instructions; left out when empty.
    public var instructions: String?
    /// The conversation items (the whole history every turn; item IDs are never sent).
    public var input: [ResponsesInputItem]
    /// Tools the model may call.
    public var tools: [ResponsesTool]
    /// `auto`, `none`, `required` or a specific function.
    public var toolChoice: ResponsesToolChoice
    /// Whether the model may request several tool calls in one response.
    public var parallelToolCalls: Bool
    /// Reasoning effort and summary mode, or `nil` to send no `reasoning`.
    public var reasoning: Reasoning?
    /// Always `false` for CodexKit (stateless; the ChatGPT backend requires it).
    public var store: Bool
    /// Always `true`: turns stream.
    public var stream: Bool
    /// Extra outputs to include, e.g. `reasoning.encrypted_content`.
    public var include: [String]
    /// A structured output format (`text.format`), if any.
    public var textFormat: TextFormat?
    /// Output verbosity (`text.verbosity`), if any.
    public var verbosity: String?
    /// The prompt-cache key (the thread ID), if any.
    public var promptCacheKey: String?
    /// A service tier, only on explicit opt-in (`priority`, `flex`).
    public var serviceTier: String?
    /// Client metadata (e.g. an installation ID).
    public var clientMetadata: [String: String]?

    /// Reasoning options.
    public struct Reasoning: Sendable, Hashable {
        /// The effort, sent by its wire name (`.ultra` → `max`).
        public var effort: ReasoningEffort?
        /// The summary mode (`auto`, `concise`, `detailed`), or `nil` to leave it out.
        public var summary: String?

        /// Creates reasoning options.
        public init(effort: ReasoningEffort?, summary: String? = nil) {
            self.effort = effort
            self.summary = summary
        }
    }

    /// A `json_schema` output format.
    public struct TextFormat: Sendable, Hashable {
        /// The format name.
        public var name: String
        /// The schema.
        public var schema: JSONValue
        /// Whether the provider enforces it strictly.
        public var strict: Bool
        /// An optional description.
        public var description: String?

        /// Creates a format.
        public init(name: String, schema: JSONValue, strict: Bool = true, description: String? = nil) {
            self.name = name
            self.schema = schema
            self.strict = strict
            self.description = description
        }

        /// The format of a structured-output contract.
        public init(_ format: AgentStructuredOutputFormat) {
            self.init(name: format.name, schema: format.schema, strict: format.strict, description: format.description)
        }
    }

    /// Creates a request with CodexKit's defaults: no tools, `tool_choice: auto`, `store: false`,
    /// `stream: true`.
    public init(model: String, instructions: String? = nil, input: [ResponsesInputItem] = []) {
        self.model = model
        self.instructions = instructions
        self.input = input
        tools = []
        toolChoice = .auto
        parallelToolCalls = false
        reasoning = nil
        store = false
        stream = true
        include = []
        textFormat = nil
        verbosity = nil
        promptCacheKey = nil
        serviceTier = nil
        clientMetadata = nil
    }

    /// The request as JSON.
    public var jsonValue: JSONValue {
        var object: JSONObject = ["model": .string(model)]
        if let instructions, !instructions.isEmpty { object["instructions"] = .string(instructions) }
        object["input"] = .array(input.map(\.jsonValue))
        object["tools"] = .array(tools.map(\.jsonValue))
        object["tool_choice"] = toolChoice.jsonValue
        object["parallel_tool_calls"] = .bool(parallelToolCalls)
        if let reasoning {
            var value = JSONObject()
            if let effort = reasoning.effort { value["effort"] = .string(effort.wireName) }
            if let summary = reasoning.summary { value["summary"] = .string(summary) }
            object["reasoning"] = .object(value)
        }
        object["store"] = .bool(store)
        object["stream"] = .bool(stream)
        object["include"] = .array(include.map(JSONValue.string))
        if textFormat != nil || verbosity != nil {
            var text = JSONObject()
            if let textFormat {
                var format: JSONObject = [
                    "type": "json_schema", "name": .string(textFormat.name), "schema": textFormat.schema, "strict": .bool(textFormat.strict),
                ]
                if let description = textFormat.description { format["description"] = .string(description) }
                text["format"] = .object(format)
            }
            if let verbosity { text["verbosity"] = .string(verbosity) }
            object["text"] = .object(text)
        }
        if let promptCacheKey { object["prompt_cache_key"] = .string(promptCacheKey) }
        if let serviceTier { object["service_tier"] = .string(serviceTier) }
        if let clientMetadata { object["client_metadata"] = .object(JSONObject(clientMetadata.mapValues(JSONValue.string))) }
        return .object(object)
    }

    /// The canonical JSON body (sorted keys, no whitespace): equal requests give equal bytes and digests.
    public func body() -> [UInt8] {
        jsonValue.canonicalBytes()
    }
}

/// The `tool_choice` field.
public enum ResponsesToolChoice: Sendable, Hashable {
    /// The model decides.
    case auto
    /// No tool calls.
    case none
    /// At least one tool call.
    case required
    /// This function.
    case function(name: String)

    /// The wire JSON.
    public var jsonValue: JSONValue {
        switch self {
        case .auto: return "auto"
        case .none: return "none"
        case .required: return "required"
        case .function(let name): return ["type": "function", "name": .string(name)]
        }
    }
}

/// A tool offered to the model.
public enum ResponsesTool: Sendable, Hashable {
    /// A host function: `{"type":"function","name","description","parameters","strict"}`.
    case function(name: String, description: String, parameters: JSONValue, strict: Bool)
    /// The hosted image generator: `{"type":"image_generation","output_format":…}`.
    case imageGeneration(outputFormat: String)
    /// Any other tool JSON, sent as it is.
    case raw(JSONValue)

    /// A host tool: `parameters` with a `properties` key, and `strict: true` exactly when that schema
    /// fits the strict subset (``CodexCore/ToolDefinition/fitsStrictMode``).
    public init(_ definition: ToolDefinition) {
        self = .function(
            name: definition.name, description: definition.description, parameters: definition.wireParameters, strict: definition.fitsStrictMode
        )
    }

    /// The wire JSON.
    public var jsonValue: JSONValue {
        switch self {
        case .function(let name, let description, let parameters, let strict):
            return ["type": "function", "name": .string(name), "description": .string(description), "parameters": parameters, "strict": .bool(strict)]
        case .imageGeneration(let outputFormat):
            return ["type": "image_generation", "output_format": .string(outputFormat)]
        case .raw(let value):
            return value
        }
    }
}
