/// Whether a call of a tool that started and did not finish (its process died mid-call) may simply run
/// again when its durable turn resumes.
///
/// A durable turn knows which calls finished (their results are journaled and reused, never run again)
/// but not whether a call that was cut short had its side effect. A tool that is safe to repeat with the
/// same ``ToolExecutionContext/idempotencyKey`` (a read, or a write the host's own system deduplicates by
/// that key) says ``idempotent``; any other tool is ``notReplayable`` (the default, the safe side), and the
/// host's ``AgentTurnRecoveryPolicy`` decides: run it again with the same key, report "outcome unknown" to
/// the model as a failed result, or ask through an approval.
public struct ToolReplaySafety: OpenVocabulary {
    /// The value's name: `idempotent`, `not_replayable`.
    public let rawValue: String

    /// Creates a value from its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Running the call again with the same idempotency key has the effect of running it once.
    public static let idempotent = ToolReplaySafety(rawValue: "idempotent")
    /// Running the call again may repeat its effect: the host's policy decides. The default.
    public static let notReplayable = ToolReplaySafety(rawValue: "not_replayable")

}
