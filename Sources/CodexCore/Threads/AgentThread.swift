public import Foundation

/// A thread's state as the runtime reports it. Unknown states are kept.
public struct AgentThreadStatus: OpenVocabulary {
    /// The name.
    public let rawValue: String
    /// Creates a status.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// No turn is running.
    public static let idle = AgentThreadStatus(rawValue: "idle")
    /// A persistent turn is running.
    public static let running = AgentThreadStatus(rawValue: "running")
    /// Waiting for a tool result or an approval.
    public static let waiting = AgentThreadStatus(rawValue: "waiting")

}

/// A thread's model settings.
public struct AgentThreadConfiguration: Sendable, Hashable, Codable {
    /// The model, or `nil` for the backend's default.
    public var model: CodexModel?
    /// The effort, or `nil` for the model's default.
    public var reasoningEffort: ReasoningEffort?

    /// Creates a configuration.
    public init(model: CodexModel? = nil, reasoningEffort: ReasoningEffort? = nil) {
        self.model = model
        self.reasoningEffort = reasoningEffort
    }
}

/// A conversation thread.
public struct AgentThread: Sendable, Hashable, Codable, Identifiable {
    /// The thread's identifier.
    public var id: AgentThreadID
    /// A title.
    public var title: String?
    /// Model and effort.
    public var configuration: AgentThreadConfiguration
    /// The thread's persona, replacing the runtime's.
    public var persona: AgentPersonaStack?
    /// Skill IDs pinned to the thread.
    public var skillIDs: [String]
    /// The current status.
    public var status: AgentThreadStatus
    /// The account the thread belongs to, when bound.
    public var accountBinding: String?
    /// The one outstanding wait of the running turn (a tool result or an approval), while the status is
    /// ``AgentThreadStatus/waiting``; `nil` otherwise. Concurrent calls show as tool lifecycle events.
    public var pending: AgentThreadPendingState?
    /// When it was created.
    public var createdAt: Date
    /// When it last changed.
    public var updatedAt: Date

    /// Creates a thread.
    public init(
        id: AgentThreadID = AgentThreadID(),
        title: String? = nil,
        configuration: AgentThreadConfiguration = .init(),
        persona: AgentPersonaStack? = nil,
        skillIDs: [String] = [],
        status: AgentThreadStatus = .idle,
        accountBinding: String? = nil,
        createdAt: Date = Date(),
        updatedAt: Date? = nil
    ) {
        self.id = id
        self.title = title
        self.configuration = configuration
        self.persona = persona
        self.skillIDs = skillIDs
        self.status = status
        self.accountBinding = accountBinding
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
        self.pending = nil
    }

    /// Sets the status and `updatedAt`; any status but ``AgentThreadStatus/waiting`` also clears
    /// ``pending``. Every store's `recordTurn` uses it, so a finished, failed or interrupted turn never
    /// leaves a wait behind.
    public mutating func settle(_ status: AgentThreadStatus, at date: Date) {
        self.status = status
        updatedAt = date
        if status != .waiting { pending = nil }
    }
}

/// What a thread's running turn is waiting for.
public struct AgentThreadPendingState: Sendable, Hashable, Codable {
    /// The kind of wait.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A host tool is running (the first outstanding call of the batch).
        case toolResult = "tool_result"
        /// A call waits for the host's approval.
        case approval
    }

    /// The kind of wait.
    public var kind: Kind
    /// The turn that waits.
    public var turnID: AgentTurnID
    /// The call waited for.
    public var invocation: ToolInvocation
    /// The approval request, for ``Kind/approval``.
    public var approvalRequestID: AgentApprovalID?
    /// When the wait began.
    public var since: Date

    /// Creates a pending state.
    public init(kind: Kind, turnID: AgentTurnID, invocation: ToolInvocation, approvalRequestID: AgentApprovalID? = nil, since: Date) {
        self.kind = kind
        self.turnID = turnID
        self.invocation = invocation
        self.approvalRequestID = approvalRequestID
        self.since = since
    }
}

/// How a turn ended, or that it is still running. Unknown statuses are kept.
public struct AgentTurnStatus: OpenVocabulary {
    /// The name.
    public let rawValue: String
    /// Creates a status.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Still running.
    public static let running = AgentTurnStatus(rawValue: "running")
    /// Finished successfully.
    public static let completed = AgentTurnStatus(rawValue: "completed")
    /// Failed.
    public static let failed = AgentTurnStatus(rawValue: "failed")
    /// Cancelled by the user or host.
    public static let interrupted = AgentTurnStatus(rawValue: "interrupted")
    /// A durable turn parked until an approval is answered: no task runs it and no runtime owns it; it
    /// continues when resumed after the answer.
    public static let waitingForApproval = AgentTurnStatus(rawValue: "waiting_for_approval")

}

/// A turn record.
public struct AgentTurn: Sendable, Hashable, Codable, Identifiable {
    /// The turn's identifier.
    public var id: AgentTurnID
    /// Its thread.
    public var threadID: AgentThreadID
    /// The status.
    public var status: AgentTurnStatus
    /// Whether it was ephemeral.
    public var executionMode: RequestExecutionMode
    /// When it started.
    public var startedAt: Date
    /// When it ended.
    public var finishedAt: Date?
    /// Token usage, when known.
    public var usage: AgentUsage?
    /// The failure, for failed turns.
    public var failure: AgentRuntimeError?
    /// The runtime instance that runs (or ran) the turn: its owner lease ID. A turn still shown
    /// running is abandoned only when this owner's lease is free (its process is gone); `nil` in
    /// records written before owners were recorded.
    public var ownerID: String?

    /// Creates a turn record.
    public init(
        id: AgentTurnID = AgentTurnID(), threadID: AgentThreadID, status: AgentTurnStatus = .running,
        executionMode: RequestExecutionMode = .threaded, startedAt: Date = Date(), finishedAt: Date? = nil,
        usage: AgentUsage? = nil, failure: AgentRuntimeError? = nil, ownerID: String? = nil
    ) {
        self.id = id
        self.threadID = threadID
        self.status = status
        self.executionMode = executionMode
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.usage = usage
        self.failure = failure
        self.ownerID = ownerID
    }
}

/// What a successful turn produced.
public struct AgentTurnSummary: Sendable, Hashable, Codable {
    /// The turn.
    public var turnID: AgentTurnID
    /// The thread.
    public var threadID: AgentThreadID
    /// The final assistant message, when there is one.
    public var finalMessage: AgentMessage?
    /// Token usage, when reported.
    public var usage: AgentUsage?
    /// The provider's response ID of the last model pass.
    public var responseID: String?
    /// When it finished.
    public var finishedAt: Date
    /// Which memories the turn's instructions carried; `nil` when the runtime has no memory configured.
    public var memoryApplication: AgentMemoryApplication?

    /// Creates a summary.
    public init(
        turnID: AgentTurnID, threadID: AgentThreadID, finalMessage: AgentMessage? = nil, usage: AgentUsage? = nil,
        responseID: String? = nil, finishedAt: Date = Date(), memoryApplication: AgentMemoryApplication? = nil
    ) {
        self.memoryApplication = memoryApplication
        self.turnID = turnID
        self.threadID = threadID
        self.finalMessage = finalMessage
        self.usage = usage
        self.responseID = responseID
        self.finishedAt = finishedAt
    }
}

/// Why and where a turn was interrupted.
public struct AgentTurnInterruption: Sendable, Hashable, Codable {
    /// The turn.
    public var turnID: AgentTurnID
    /// The thread.
    public var threadID: AgentThreadID
    /// A short reason, e.g. `cancelled` or `interrupted_by_host`.
    public var reason: String

    /// Creates an interruption.
    public init(turnID: AgentTurnID, threadID: AgentThreadID, reason: String) {
        self.turnID = turnID
        self.threadID = threadID
        self.reason = reason
    }
}
