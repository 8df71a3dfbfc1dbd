/// Where retrieved memories go inside a turn's instructions, relative to the persona (or a backend's
/// base instructions when no persona applies) and the selected skills' instructions.
///
/// The default, ``afterSkills``, keeps the instructions that stay the same from turn to turn first, so
/// a provider's prompt cache still matches them when the retrieved memories change.
public enum MemoryInstructionPlacement: String, Sendable, Hashable, Codable, CaseIterable {
    /// Memories, then the persona, then the skills.
    case beforePersonas = "before_personas"
    /// The persona, then memories, then the skills.
    case beforeSkills = "before_skills"
    /// The persona, then the skills, then memories.
    case afterSkills = "after_skills"
}
