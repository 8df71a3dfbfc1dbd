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
