public import CodexCore

/// One accepted turn started with ``AgentRuntime/start(_:in:)``: its events and its controls.
///
/// ```swift
/// let execution = try await runtime.start(Request(text: "Summarise the thread."), in: threadID)
/// try await execution.waitUntilReady()          // the backend accepted the first request
/// try await execution.steer("Keep it short.")
/// for try await event in execution.events { … }
/// ```
///
/// The controls act on this execution only: an old handle never cancels or steers a newer turn.
public struct AgentTurnExecution: Sendable {
    /// The turn's ID.
    public let id: AgentTurnID
    /// The thread.
    public let threadID: AgentThreadID
    /// The turn's events; consume them from one task (releasing them cancels the turn, as for
    /// ``AgentRuntime/stream(_:in:)``).
    public let events: AgentEventStream<AgentEvent>
    let readiness: ReadinessLatch
    let cancelAction: @Sendable () -> Void
    let runtime: AgentRuntime

    /// Returns once the backend accepted the turn's first request, before any output or tool effect.
    /// Cancelling the waiting task ends only this wait, never the turn.
    ///
    /// - Throws: The error that ended the turn before it was ready, or `CancellationError`.
    public func waitUntilReady() async throws {
        try await readiness.wait()
    }

    /// Cancels this execution: a persistent turn is interrupted as by ``AgentRuntime/interrupt(in:expectedTurnID:)``
    /// (nothing happens once it finished or when a newer turn holds the thread); an ephemeral one is
    /// cancelled and records nothing.
    public func cancel() {
        cancelAction()
    }

    /// Steers this execution (see ``AgentRuntime/steer(_:images:in:expectedTurnID:)``).
    ///
    /// - Throws: `turn_not_active` when this execution is no longer the thread's active turn (or is
    ///   ephemeral), and the other steering errors.
    public func steer(_ text: String, images: [AgentImageAttachment] = []) async throws {
        try await runtime.steer(text, images: images, in: threadID, expectedTurnID: id)
    }
}
