import CodexCore
import Synchronization

/// ``SteeringQueueState`` behind one lock, shared by a turn's producer and the host's steer calls.
final class SteeringQueue: Sendable {
    private let state = Mutex(SteeringQueueState())

    /// See ``SteeringQueueState/accept(_:)``.
    func accept(_ text: String, images: [AgentImageAttachment]) throws(AgentRuntimeError) {
        try state.withLock { state throws(AgentRuntimeError) in try state.accept(.init(text: text, images: images)) }
    }

    /// See ``SteeringQueueState/drain(closing:)``.
    func drain(closing: Bool) -> [SteeringQueueState.Input] { state.withLock { $0.drain(closing: closing) } }

    /// See ``SteeringQueueState/decideCompletion(closing:)``.
    func decideCompletion(closing: Bool) -> SteeringQueueState.CompletionDecision { state.withLock { $0.decideCompletion(closing: closing) } }

    /// See ``SteeringQueueState/close()``.
    @discardableResult
    func close() -> [SteeringQueueState.Input] { state.withLock { $0.close() } }
}
