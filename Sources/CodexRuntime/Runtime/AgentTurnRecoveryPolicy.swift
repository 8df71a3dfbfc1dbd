public import CodexRecovery

/// What the runtime does with a persistent turn that a crashed or killed process left running.
///
/// ``interrupt`` (the default) records it interrupted, as before durable turns existed. ``resume(unfinishedCalls:maximumAttempts:authorizeAttempt:)``
/// makes every persistent turn durable: the runtime records each step in the state store's journal
/// (``CodexCore/TurnJournaling``) before the action that depends on it, and a turn left running
/// continues from its last recorded step (``AgentRuntime/resumeTurn(_:in:)``,
/// ``AgentRuntime/recoverAbandonedTurns()``): finished tool results are reused, never run again; a
/// model request that was cut short is sent again only as a new attempt the host authorizes, within the
/// attempt budget, exactly as structured request recovery does; a tool call that started and did not
/// finish runs again when its tool is ``CodexCore/ToolReplaySafety/idempotent`` and otherwise follows
/// `unfinishedCalls`. Approvals are stored and outlive the process.
///
/// ```swift
/// let runtime = try AgentRuntime(configuration: .init(
///     backend: backend, stateStore: try SQLiteRuntimeStateStore(path: path), tools: tools,
///     turnRecovery: .resume(unfinishedCalls: .reportUnknownOutcome) { attempt in
///         try await jobs.mayResend(turn: attempt.operationID, attempt: attempt.id)   // idempotent per attempt ID
///     }
/// ))
/// ```
public struct AgentTurnRecoveryPolicy: Sendable {
    /// What a resumed turn does with a call that started and did not finish, when its tool is not
    /// idempotent.
    public struct UnfinishedCall: Sendable, Hashable, CustomStringConvertible {
        /// The value's name.
        public let rawValue: String

        /// Run it again with the same idempotency key (the host's own system deduplicates by the key).
        public static let runAgain = UnfinishedCall(rawValue: "run_again")
        /// Do not run it: the model receives a failed result saying the outcome is unknown. The default.
        public static let reportUnknownOutcome = UnfinishedCall(rawValue: "report_unknown_outcome")
        /// Ask through an approval whether to run it again (denied: the outcome-unknown result).
        public static let askForApproval = UnfinishedCall(rawValue: "ask_for_approval")

        /// The name.
        public var description: String { rawValue }
    }

    /// Whether abandoned turns are resumed (`false`: recorded interrupted).
    public let resumes: Bool
    /// What to do with a call that started and did not finish, when its tool is not idempotent.
    public var unfinishedCalls: UnfinishedCall
    /// The most attempts a model request may take across crashes (1…1,000).
    public var maximumAttempts: Int
    /// Asked before a model request that may already have been sent is sent again. Called with the
    /// recovery engine's attempt: `operationID` names the turn, `id` the attempt (stable if the callback
    /// runs again for the same attempt), `number` its place in the budget. Return `false` to decline (the
    /// turn fails with `attempt_not_authorized`); throw to leave the turn as it is.
    public var authorizeAttempt: @Sendable (AgentRecoveryAttempt) async throws -> Bool

    /// Turns left running are recorded interrupted (nothing is journaled).
    public static let interrupt = AgentTurnRecoveryPolicy(resumes: false, unfinishedCalls: .reportUnknownOutcome, maximumAttempts: 1) { _ in false }

    /// Persistent turns are durable and resumed.
    /// - Parameters:
    ///   - unfinishedCalls: What to do with a call cut short when its tool is not idempotent.
    ///   - maximumAttempts: The attempt budget of each model request (clamped to 1…1,000; default 3).
    ///   - authorizeAttempt: The host's decision before a request that may have been sent is sent again.
    public static func resume(
        unfinishedCalls: UnfinishedCall = .reportUnknownOutcome, maximumAttempts: Int = 3,
        authorizeAttempt: @escaping @Sendable (AgentRecoveryAttempt) async throws -> Bool
    ) -> AgentTurnRecoveryPolicy {
        AgentTurnRecoveryPolicy(
            resumes: true, unfinishedCalls: unfinishedCalls, maximumAttempts: min(max(maximumAttempts, 1), 1000), authorizeAttempt: authorizeAttempt
        )
    }

    private init(
        resumes: Bool, unfinishedCalls: UnfinishedCall, maximumAttempts: Int, authorizeAttempt: @escaping @Sendable (AgentRecoveryAttempt) async throws -> Bool
    ) {
        self.resumes = resumes
        self.unfinishedCalls = unfinishedCalls
        self.maximumAttempts = maximumAttempts
        self.authorizeAttempt = authorizeAttempt
    }
}
