public import CodexSchema

/// Whether a tool call needs the host's approval before it runs.
public enum ToolApprovalPolicy: String, Sendable, Hashable, Codable {
    /// Runs without asking.
    case automatic
    /// Asks the approval presenter first; approval-gated tools always run alone.
    case requiresApproval = "requires_approval"
}

/// A host tool the model may call, with a JSON-schema input.
///
/// ```swift
/// let lookup = ToolDefinition(
///     name: "lookup_product",
///     description: "Read product details.",
///     inputSchema: .object(["type": .string("object"), "properties": .object([:])]),
///     supportsParallelExecution: true
/// )
/// ```
public struct ToolDefinition: Sendable, Hashable, Codable {
    /// The tool name: letters, digits, `_` and `-` only.
    public var name: String
    /// What the tool does, for the model.
    public var description: String
    /// The schema of the arguments object.
    public var inputSchema: JSONValue
    /// Whether calls need approval. Default `.automatic`.
    public var approvalPolicy: ToolApprovalPolicy
    /// A message shown with approval requests.
    public var approvalMessage: String?
    /// Whether calls may run concurrently with other parallel-safe calls. Default `false`.
    public var supportsParallelExecution: Bool
    /// Whether a call cut short by a crash may run again when its durable turn resumes. Default
    /// ``ToolReplaySafety/notReplayable``: the host's recovery policy decides.
    public var replaySafety: ToolReplaySafety

    /// Creates a tool definition. Check it with ``validate()``.
    public init(
        name: String,
        description: String,
        inputSchema: JSONValue,
        approvalPolicy: ToolApprovalPolicy = .automatic,
        approvalMessage: String? = nil,
        supportsParallelExecution: Bool = false,
        replaySafety: ToolReplaySafety = .notReplayable
    ) {
        self.name = name
        self.description = description
        self.inputSchema = inputSchema
        self.approvalPolicy = approvalPolicy
        self.approvalMessage = approvalMessage
        self.supportsParallelExecution = supportsParallelExecution
        self.replaySafety = replaySafety
    }

    private enum CodingKeys: String, CodingKey {
        case name, description, inputSchema, approvalPolicy, approvalMessage, supportsParallelExecution, replaySafety
    }

    /// Decodes a definition; one stored before replay safety existed is ``ToolReplaySafety/notReplayable``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        description = try container.decode(String.self, forKey: .description)
        inputSchema = try container.decode(JSONValue.self, forKey: .inputSchema)
        approvalPolicy = try container.decode(ToolApprovalPolicy.self, forKey: .approvalPolicy)
        approvalMessage = try container.decodeIfPresent(String.self, forKey: .approvalMessage)
        supportsParallelExecution = try container.decode(Bool.self, forKey: .supportsParallelExecution)
        replaySafety = try container.decodeIfPresent(ToolReplaySafety.self, forKey: .replaySafety) ?? .notReplayable
    }

    /// The digest an approval of a call of this tool is bound to: SHA-256 of the definition and the
    /// call's arguments, canonical JSON. An answer given for another digest (the tool or the arguments
    /// changed since) is refused.
    public func approvalDigest(arguments: String) -> String {
        var definition: JSONObject = [
            "name": .string(name), "description": .string(description), "input_schema": inputSchema,
            "approval_policy": .string(approvalPolicy.rawValue), "replay_safety": .string(replaySafety.rawValue),
        ]
        if let approvalMessage { definition["approval_message"] = .string(approvalMessage) }
        let document: JSONValue = ["definition": .object(definition), "arguments": .string(arguments)]
        return SHA256.hexDigest(of: document.canonicalBytes())
    }

    /// The parameters schema sent on the wire: the input schema, with a `properties` key added when it
    /// has none (the Responses API expects one).
    public var wireParameters: JSONValue {
        guard case .object(var object) = inputSchema else { return inputSchema }
        if object["properties"] == nil { object["properties"] = .object([:]) }
        return .object(object)
    }

    /// Whether the tool is sent with `strict: true`: its parameters schema fits the strict subset
    /// (``CodexSchema/JSONSchemaStrictMode``), so the provider itself holds the model to the schema.
    public var fitsStrictMode: Bool { JSONSchemaStrictMode.accepts(wireParameters) }

    /// Checks the name pattern `^[a-zA-Z0-9_-]+$`.
    ///
    /// - Throws: ``AgentRuntimeError`` with code `invalid_tool_definition`.
    public func validate() throws {
        let valid = !name.isEmpty && name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard valid else {
            throw AgentRuntimeError(code: .invalidToolDefinition, message: "tool names use only letters, digits, '_' and '-'")
        }
    }
}

/// One call the model requested.
public struct ToolInvocation: Sendable, Hashable, Codable, Identifiable {
    /// The provider's `call_id`.
    public var id: ToolInvocationID
    /// The tool's name.
    public var toolName: String
    /// The arguments JSON text exactly as the model produced it.
    public var arguments: String
    /// The thread, when known.
    public var threadID: AgentThreadID?
    /// The turn, when known.
    public var turnID: AgentTurnID?

    /// Creates an invocation.
    public init(id: ToolInvocationID, toolName: String, arguments: String, threadID: AgentThreadID? = nil, turnID: AgentTurnID? = nil) {
        self.id = id
        self.toolName = toolName
        self.arguments = arguments
        self.threadID = threadID
        self.turnID = turnID
    }

    /// The arguments parsed strictly.
    ///
    /// - Throws: ``CodexSchemaError`` for malformed JSON.
    public func parsedArguments() throws -> JSONValue {
        try JSONValue(parsing: arguments)
    }
}
