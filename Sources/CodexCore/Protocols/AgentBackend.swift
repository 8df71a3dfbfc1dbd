
/// Everything a backend needs to run one turn. A sketch that the runtime issue refines.
public struct AgentBackendTurnRequest: Sendable {
    /// The thread.
    public var threadID: AgentThreadID
    /// The turn.
    public var turnID: AgentTurnID
    /// The request being answered.
    public var request: Request
    /// History to replay (empty for ephemeral turns).
    public var history: [AgentHistoryItem]
    /// The resolved model.
    public var model: CodexModel
    /// The resolved effort.
    public var reasoningEffort: ReasoningEffort?
    /// The most specific persona's instructions (request over thread over runtime); empty when none
    /// applies, so a backend keeps its own base personality.
    public var instructions: String
    /// The selected skills' instructions, in order: added after the persona (or the backend's base
    /// personality), never replacing it.
    public var skillInstructions: [String]
    /// The host tools available.
    public var tools: [ToolDefinition]
    /// The structured response contract sent as the Responses `text.format` (one-shot structured turns).
    public var responseFormat: AgentStructuredOutputFormat?
    /// A developer message the runtime adds after the user message (the "Response contract": what to
    /// return, and for streamed structured turns how to frame it). Not persisted in history.
    public var responseContract: String?
    /// The retrieved memories rendered for the instructions, when the runtime applied any.
    public var memoryInstructions: String?
    /// Where ``memoryInstructions`` go.
    public var memoryPlacement: MemoryInstructionPlacement = .afterSkills

    /// Creates a turn request.
    public init(
        threadID: AgentThreadID, turnID: AgentTurnID, request: Request, history: [AgentHistoryItem] = [], model: CodexModel,
        reasoningEffort: ReasoningEffort? = nil, instructions: String = "", skillInstructions: [String] = [], tools: [ToolDefinition] = [],
        responseFormat: AgentStructuredOutputFormat? = nil, responseContract: String? = nil
    ) {
        self.threadID = threadID
        self.turnID = turnID
        self.request = request
        self.history = history
        self.model = model
        self.reasoningEffort = reasoningEffort
        self.instructions = instructions
        self.skillInstructions = skillInstructions
        self.tools = tools
        self.responseFormat = responseFormat
        self.responseContract = responseContract
    }

    /// The turn's instructions as one text: the persona's (else `base`, a backend's own base
    /// instructions), the skills' and the memories', in the order ``memoryPlacement`` gives, separated by
    /// blank lines; `nil` when all are empty. The built-in backend sends exactly this.
    public func compiledInstructions(base: String?) -> String? {
        Self.compileInstructions(
            persona: instructions, skills: skillInstructions, memory: memoryInstructions, placement: memoryPlacement, base: base
        )
    }

    /// Instructions compiled from their parts, as ``compiledInstructions(base:)`` does.
    public static func compileInstructions(
        persona: String, skills: [String], memory: String? = nil, placement: MemoryInstructionPlacement = .afterSkills, base: String?
    ) -> String? {
        let persona = persona.isEmpty ? base ?? "" : persona
        let memory = memory ?? ""
        let parts: [String] = switch placement {
        case .beforePersonas: [memory, persona] + skills
        case .beforeSkills: [persona, memory] + skills
        case .afterSkills: [persona] + skills + [memory]
        }
        let kept = parts.filter { !$0.isEmpty }
        return kept.isEmpty ? nil : kept.joined(separator: "\n\n")
    }
}

/// A running turn as a backend exposes it: its events and the controls the runtime may use.
///
/// - Important: A successful turn must emit ``AgentBackendEvent/turnCompleted(_:)``; a stream that
///   simply ends fails with `turn_summary_missing`.
public struct AgentTurnStream: Sendable {
    /// The turn's events, in order.
    public let events: AsyncThrowingStream<AgentBackendEvent, any Error>
    /// Accepts one tool result by invocation ID.
    public let submitToolResult: @Sendable (ToolResultEnvelope) async throws -> Void
    /// Queues steering input for the next model request, if supported.
    public let steer: (@Sendable (String, [AgentImageAttachment]) async throws -> Void)?
    /// Interrupts the turn, if supported.
    public let interrupt: (@Sendable () async -> Void)?
    /// Returns once the first request was accepted (before any output or tool effect).
    public let waitUntilReady: @Sendable () async throws -> Void

    /// Creates a turn stream.
    public init(
        events: AsyncThrowingStream<AgentBackendEvent, any Error>,
        submitToolResult: @escaping @Sendable (ToolResultEnvelope) async throws -> Void = { _ in },
        steer: (@Sendable (String, [AgentImageAttachment]) async throws -> Void)? = nil,
        interrupt: (@Sendable () async -> Void)? = nil,
        waitUntilReady: @escaping @Sendable () async throws -> Void = {}
    ) {
        self.events = events
        self.submitToolResult = submitToolResult
        self.steer = steer
        self.interrupt = interrupt
        self.waitUntilReady = waitUntilReady
    }

    /// Submits `envelope` as the answer to `invocation`, first checking that it keeps the call's
    /// identity (invocation ID and tool name).
    ///
    /// - Throws: ``AgentRuntimeError`` `invalid_tool_result` for another identity (nothing is submitted),
    ///   or the backend's own refusal.
    public func submit(_ envelope: ToolResultEnvelope, for invocation: ToolInvocation) async throws {
        guard envelope.matches(invocation) else {
            throw AgentRuntimeError(code: .invalidToolResult, message: "the result's invocation ID or tool name differs from the call it answers")
        }
        try await submitToolResult(envelope)
    }
}

/// A model backend: runs turns.
///
/// Implementation requirements: honour task cancellation promptly; emit `turnCompleted` for success;
/// keep tool-result identities (invocation ID and tool name).
public protocol AgentBackend: Sendable {
    /// Starts a turn.
    func startTurn(_ request: AgentBackendTurnRequest) async throws -> AgentTurnStream
    /// The model used when neither the thread nor the runtime names one (`nil`: ``CodexModel/default``).
    var defaultModel: CodexModel? { get }
    /// The instructions the backend sends when no persona applies (`nil`: none), so the runtime can
    /// digest a turn's instructions exactly as sent (``AgentBackendTurnRequest/compiledInstructions(base:)``).
    var baseInstructions: String? { get }
}

extension AgentBackend {
    /// No preference: the runtime falls back to ``CodexModel/default``.
    public var defaultModel: CodexModel? { nil }
    /// No base instructions.
    public var baseInstructions: String? { nil }
}
