import CodexSchema
import Foundation

/// One turn's input: the user's text and images plus optional typed context, fulfilment policy and
/// per-request behaviour.
///
/// ```swift
/// let request = try Request(
///     text: "Create a healthy diet plan for this week.",
///     context: NutritionProfile(dietaryGoal: "Lose weight while maintaining energy", allergies: ["peanuts"]),
///     options: DietPlanningOptions(mode: .planning, requirements: [.proteinTarget, .fiberTarget, .mealIdeas])
/// )
/// request.developerMessages.map(\.text)
/// // [#"{"dietaryGoal":"Lose weight while maintaining energy","allergies":["peanuts"]}"#,
/// //  "Mode: Plan a healthy diet…\nRequirements:\n- Recommend meals…\n- …"]
/// ```
///
/// Context and options are rendered when the request is created, so a `Request` is a plain value:
/// `Sendable`, `Hashable` and `Codable`.
public struct Request: Sendable, Hashable, Codable {
    /// The user's prompt text (may be empty for an image-only message).
    public var text: String
    /// Images sent with the prompt.
    public var images: [AgentImageAttachment]
    /// The rendered host context: compact JSON of the context value, in its encoding order.
    public var renderedContext: String?
    /// The name of the context's schema or type, when given.
    public var contextSchemaName: String?
    /// The rendered turn policy (`Mode:` / `Requirements:`), when options were given.
    public var renderedPolicy: String?
    /// Whether the turn uses and updates thread history.
    public var executionMode: RequestExecutionMode
    /// A persona for this request only; replaces the thread's and the runtime's.
    public var personaOverride: AgentPersonaStack?
    /// Which skills apply to this request.
    public var skillSelection: AgentSkillSelection
    /// The model and effort for this turn only: binding, ahead of any selector, the thread's model and
    /// the backend's default.
    public var modelOverride: CodexModelConfiguration?
    /// What the host needs this turn for (for example `"news-summary"`), given to the model selector. It
    /// is never sent to the model.
    public var selectionPurpose: String?
    /// What the turn needs of its model, given to the model selector.
    public var modelRequirements: AgentModelRequirements?
    /// How this request uses the runtime's memory: the configured search by default, with ``text`` as
    /// the query.
    public var memorySelection: MemorySelection = .inherit

    /// Creates a request without context or options.
    public init(
        text: String,
        images: [AgentImageAttachment] = [],
        executionMode: RequestExecutionMode = .threaded,
        personaOverride: AgentPersonaStack? = nil,
        skillSelection: AgentSkillSelection = .inherit
    ) {
        self.text = text
        self.images = images
        self.executionMode = executionMode
        self.personaOverride = personaOverride
        self.skillSelection = skillSelection
    }

    /// Creates a request with typed context and/or options.
    ///
    /// - Parameters:
    ///   - text: The user's prompt.
    ///   - images: Images sent with the prompt.
    ///   - context: Authoritative machine context, encoded as compact JSON in the order the type encodes
    ///     its properties.
    ///   - contextSchemaName: A name for the context's shape, shown to the model before the JSON.
    ///   - options: Fulfilment policy rendered as `Mode:` and `Requirements:` lines.
    ///   - executionMode: `.threaded` (default) or `.ephemeral`.
    ///   - personaOverride: A persona for this request only.
    ///   - skillSelection: Which skills apply.
    /// - Throws: ``AgentRuntimeError`` with code `invalid_request_context` when the context cannot be encoded.
    public init(
        text: String,
        images: [AgentImageAttachment] = [],
        context: (some Encodable & Sendable)? = nil as String?,
        contextSchemaName: String? = nil,
        options: (some RequestOptionsRepresentable)? = nil as NoRequestOptions?,
        executionMode: RequestExecutionMode = .threaded,
        personaOverride: AgentPersonaStack? = nil,
        skillSelection: AgentSkillSelection = .inherit
    ) throws {
        self.init(text: text, images: images, executionMode: executionMode, personaOverride: personaOverride, skillSelection: skillSelection)
        if let context {
            do {
                renderedContext = try JSONValueEncoder().encode(context).compactString()
            } catch {
                throw AgentRuntimeError(code: .invalidRequestContext, message: "the request context could not be encoded as JSON")
            }
            self.contextSchemaName = contextSchemaName
        }
        renderedPolicy = options?.renderedPolicy
    }

    /// The developer messages this request adds, in order: context, then turn policy.
    ///
    /// The context message is the compact JSON, preceded by a `Context type: <name>` line when
    /// ``contextSchemaName`` is set.
    public var developerMessages: [AgentDeveloperMessage] {
        var messages: [AgentDeveloperMessage] = []
        if let renderedContext {
            let text = contextSchemaName.map { "Context type: \($0)\n\(renderedContext)" } ?? renderedContext
            messages.append(AgentDeveloperMessage(kind: .context, text: text))
        }
        if let renderedPolicy {
            messages.append(AgentDeveloperMessage(kind: .turnPolicy, text: renderedPolicy))
        }
        return messages
    }
}

extension Request {
    enum CodingKeys: String, CodingKey {
        case text, images, renderedContext, contextSchemaName, renderedPolicy, executionMode, personaOverride, skillSelection
        case modelOverride, selectionPurpose, modelRequirements, memorySelection
    }

    /// Decodes a request; one encoded before requests had a memory selection inherits the configured one.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            text: try container.decode(String.self, forKey: .text),
            images: try container.decode([AgentImageAttachment].self, forKey: .images),
            executionMode: try container.decode(RequestExecutionMode.self, forKey: .executionMode),
            personaOverride: try container.decodeIfPresent(AgentPersonaStack.self, forKey: .personaOverride),
            skillSelection: try container.decode(AgentSkillSelection.self, forKey: .skillSelection)
        )
        renderedContext = try container.decodeIfPresent(String.self, forKey: .renderedContext)
        contextSchemaName = try container.decodeIfPresent(String.self, forKey: .contextSchemaName)
        renderedPolicy = try container.decodeIfPresent(String.self, forKey: .renderedPolicy)
        modelOverride = try container.decodeIfPresent(CodexModelConfiguration.self, forKey: .modelOverride)
        selectionPurpose = try container.decodeIfPresent(String.self, forKey: .selectionPurpose)
        modelRequirements = try container.decodeIfPresent(AgentModelRequirements.self, forKey: .modelRequirements)
        memorySelection = try container.decodeIfPresent(MemorySelection.self, forKey: .memorySelection) ?? .inherit
    }
}

/// Placeholder options type for requests without options.
public struct NoRequestOptions: RequestOptionsRepresentable {
    /// No mode.
    public struct NoMode: RequestMode {
        /// Empty.
        public var naturalLanguage: String { "" }
    }

    /// No requirement.
    public struct NoRequirement: RequestRequirement {
        /// Empty.
        public var naturalLanguage: String { "" }
    }

    /// Unused.
    public var mode: NoMode { NoMode() }
    /// Unused.
    public var requirements: [NoRequirement] { [] }
}

/// Whether a turn uses the thread's history.
public enum RequestExecutionMode: String, Sendable, Hashable, Codable {
    /// Replays the thread's history, records the transcript and updates the thread's pending state.
    case threaded
    /// Fast and transient: no history replay, compaction, transcript or pending-state writes, or memory
    /// capture; still streams, runs tools and decodes structured output.
    case ephemeral
}

/// Which skills a request uses.
public enum AgentSkillSelection: Sendable, Hashable, Codable {
    /// The thread's skills.
    case inherit
    /// Only these skills (replacing the thread's).
    case replace([String])
    /// The thread's skills plus these.
    case append([String])

    /// The skill IDs in effect given the thread's.
    public func resolve(threadSkills: [String]) -> [String] {
        switch self {
        case .inherit: return threadSkills
        case .replace(let skills): return skills
        case .append(let skills): return threadSkills + skills.filter { !threadSkills.contains($0) }
        }
    }
}
