/// What a durable turn's requests are made of besides the thread's history: recorded when the turn
/// begins, so a turn resumed by another process sends its requests with the same model, effort and
/// instructions.
public struct TurnJournalSettings: Sendable, Hashable, Codable {
    /// The resolved model.
    public var model: CodexModel
    /// The resolved reasoning effort.
    public var reasoningEffort: ReasoningEffort?
    /// The persona's instructions (empty: the backend's own).
    public var instructions: String
    /// The selected skills' instructions.
    public var skillInstructions: [String]
    /// The retrieved memories rendered for the instructions.
    public var memoryInstructions: String?
    /// Where the memories go.
    public var memoryPlacement: MemoryInstructionPlacement

    /// Creates settings.
    public init(
        model: CodexModel, reasoningEffort: ReasoningEffort?, instructions: String, skillInstructions: [String], memoryInstructions: String?,
        memoryPlacement: MemoryInstructionPlacement
    ) {
        self.model = model
        self.reasoningEffort = reasoningEffort
        self.instructions = instructions
        self.skillInstructions = skillInstructions
        self.memoryInstructions = memoryInstructions
        self.memoryPlacement = memoryPlacement
    }
}
