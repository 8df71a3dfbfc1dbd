public import CodexCore
public import CodexSchema

/// A host tool: its definition (what the model sees) and the executor that answers a call.
///
/// ```swift
/// struct LookupInput: Decodable, Sendable { let sku: String }
///
/// let lookup = AgentTool(
///     name: "lookup_product", description: "Read product details.",
///     schema: .object(properties: ["sku": .string()]), supportsParallelExecution: true
/// ) { (input: LookupInput, context) in
///     context.success("{\"sku\": \"\(input.sku)\", \"price\": 12}")
/// }
/// ```
///
/// The runtime validates a call's arguments against the definition's input schema before the executor
/// runs: arguments that are not JSON, are too large or too deep, or break the schema are answered to the
/// model as a failed result naming the keyword and JSON pointer, and the executor never sees them. The
/// executor must honour task cancellation and keep the invocation's identity: a result with another
/// invocation ID or tool name is replaced by a failed result for the original call.
public struct AgentTool: Sendable {
    /// What the model sees.
    public var definition: ToolDefinition
    /// Answers one call whose arguments passed the input schema.
    public var execute: @Sendable (ToolInvocation, ToolExecutionContext) async throws -> ToolResultEnvelope
    /// The schema arguments are checked against before ``execute`` runs, when it differs from the
    /// definition's input schema (which the model sees): an MCP tool whose schema uses keywords
    /// CodexSchema cannot enforce is checked against the rest. `nil` (the default) checks the input schema.
    public var argumentSchema: JSONValue?

    /// Creates a tool whose executor reads the invocation (arguments as the model wrote them).
    public init(definition: ToolDefinition, execute: @escaping @Sendable (ToolInvocation) async throws -> ToolResultEnvelope) {
        self.definition = definition
        self.execute = { invocation, _ in try await execute(invocation) }
    }

    /// Creates a tool whose executor also gets the call's context (thread, turn, invocation,
    /// cancellation and result helpers).
    public init(definition: ToolDefinition, execute: @escaping @Sendable (ToolInvocation, ToolExecutionContext) async throws -> ToolResultEnvelope) {
        self.definition = definition
        self.execute = execute
    }

    /// Creates a tool with a typed input: `schema` (written with the ``CodexSchema/JSONSchema`` builder)
    /// is the definition's input schema, and the validated arguments are decoded into `Input` before
    /// `execute` runs. Arguments that validate but do not decode are answered as a failed result.
    ///
    /// - Parameters:
    ///   - name: The tool name (`^[a-zA-Z0-9_-]+$`).
    ///   - description: What the tool does, for the model.
    ///   - input: The input type.
    ///   - schema: The arguments' schema.
    ///   - approvalPolicy: Whether calls need approval. Default `.automatic`.
    ///   - approvalMessage: Shown with approval requests.
    ///   - supportsParallelExecution: Whether calls may run with other parallel-safe calls. Default `false`.
    ///   - replaySafety: Whether a call cut short by a crash may simply run again when its durable turn
    ///     resumes. Default `.notReplayable`.
    ///   - execute: Answers one call.
    public init<Input: Decodable & Sendable>(
        name: String, description: String, input: Input.Type = Input.self, schema: JSONSchema,
        approvalPolicy: ToolApprovalPolicy = .automatic, approvalMessage: String? = nil, supportsParallelExecution: Bool = false,
        replaySafety: ToolReplaySafety = .notReplayable,
        execute: @escaping @Sendable (Input, ToolExecutionContext) async throws -> ToolResultEnvelope
    ) {
        definition = ToolDefinition(
            name: name, description: description, inputSchema: schema.jsonValue, approvalPolicy: approvalPolicy,
            approvalMessage: approvalMessage, supportsParallelExecution: supportsParallelExecution, replaySafety: replaySafety
        )
        self.execute = { invocation, context in
            let decoded: Input
            do {
                decoded = try JSONValueDecoder().decode(Input.self, from: context.arguments)
            } catch {
                return context.failure("The arguments do not match the tool's input (\(Input.self)).")
            }
            return try await execute(decoded, context)
        }
    }
}
