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

    /// Creates a tool definition. Check it with ``validate()``.
    public init(
        name: String,
        description: String,
        inputSchema: JSONValue,
        approvalPolicy: ToolApprovalPolicy = .automatic,
        approvalMessage: String? = nil,
        supportsParallelExecution: Bool = false
    ) {
        self.name = name
        self.description = description
        self.inputSchema = inputSchema
        self.approvalPolicy = approvalPolicy
        self.approvalMessage = approvalMessage
        self.supportsParallelExecution = supportsParallelExecution
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
