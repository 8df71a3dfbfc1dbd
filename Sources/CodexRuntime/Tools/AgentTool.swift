public import CodexCore

/// A host tool: its definition (what the model sees) and the executor that answers a call.
///
/// ```swift
/// let lookup = AgentTool(definition: ToolDefinition(name: "lookup_product", description: "Read product details.",
///                                                   inputSchema: ["type": "object"])) { invocation in
///     .success(invocation, text: "{\"price\": 12}")
/// }
/// ```
///
/// The executor must honour task cancellation and keep the invocation's identity: a result with another
/// invocation ID or tool name is replaced by a failed result for the original call.
public struct AgentTool: Sendable {
    /// What the model sees.
    public var definition: ToolDefinition
    /// Answers one call.
    public var execute: @Sendable (ToolInvocation) async throws -> ToolResultEnvelope

    /// Creates a tool.
    public init(definition: ToolDefinition, execute: @escaping @Sendable (ToolInvocation) async throws -> ToolResultEnvelope) {
        self.definition = definition
        self.execute = execute
    }
}

/// A named set of instructions a thread or request can select (``CodexCore/AgentSkillSelection``).
public struct AgentSkill: Sendable, Hashable, Codable, Identifiable {
    /// The skill's identifier, as used in thread `skillIDs` and request skill selections.
    public var id: String
    /// The instructions added to the turn's instructions, after the persona.
    public var instructions: String

    /// Creates a skill.
    public init(id: String, instructions: String) {
        self.id = id
        self.instructions = instructions
    }
}
