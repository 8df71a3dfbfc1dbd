import CodexCore
import Synchronization

/// Collects the results of one announced tool-call batch at a time for a turn of the Responses backend.
///
/// The producer ``announce(_:)``s a batch before it publishes the calls, then waits in ``results()``
/// for one result per call; results may arrive in any order and are returned in the model's call order.
/// A submission that answers no call of the outstanding batch (unknown), a call already answered
/// (duplicate), a call under another tool name (mismatched), or that arrives while no batch is
/// outstanding (late) is refused with `invalid_tool_result` and never replaces an accepted result.
/// ``close()`` (completion, failure, interruption) releases the buffers and the waiter.
final class ToolResultCollector: Sendable {
    private struct State {
        /// The outstanding batch, in call order (empty when none).
        var batch: [ToolInvocation] = []
        /// Results accepted for the outstanding batch.
        var accepted: [ToolInvocationID: ToolResultEnvelope] = [:]
        /// Every call of the turn that has been answered.
        var answered: Set<ToolInvocationID> = []
        /// A completed batch's results not yet taken by the producer.
        var completed: [ToolResultEnvelope]?
        var waiter: CheckedContinuation<[ToolResultEnvelope], any Error>?
        var closed = false
    }

    private let state = Mutex(State())

    /// Starts waiting for results of `batch` (call order).
    func announce(_ batch: [ToolInvocation]) {
        state.withLock { state in
            guard !state.closed else { return }
            state.batch = batch
            state.accepted = [:]
            state.completed = nil
        }
    }

    /// Accepts one result.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `invalid_tool_result` for unknown, duplicate, mismatched
    ///   or late submissions.
    func submit(_ envelope: ToolResultEnvelope) throws {
        let outcome = state.withLock { state -> Result<(CheckedContinuation<[ToolResultEnvelope], any Error>, [ToolResultEnvelope])?, AgentRuntimeError> in
            let id = envelope.invocationID
            if state.closed || state.batch.isEmpty {
                return .failure(Self.invalid(state.answered.contains(id)
                    ? "a result for this tool call was already accepted" : "no tool calls are awaiting results"))
            }
            guard let invocation = state.batch.first(where: { $0.id == id }) else {
                return .failure(Self.invalid(state.answered.contains(id)
                    ? "a result for this tool call was already accepted" : "the result answers no announced tool call"))
            }
            guard state.accepted[id] == nil else {
                return .failure(Self.invalid("a result for this tool call was already accepted"))
            }
            guard envelope.toolName == invocation.toolName else {
                return .failure(Self.invalid("the result's tool name does not match the announced call"))
            }
            state.accepted[id] = envelope
            guard state.accepted.count == state.batch.count else { return .success(nil) }
            let ordered = state.batch.compactMap { state.accepted[$0.id] }
            state.answered.formUnion(state.batch.map(\.id))
            state.batch = []
            state.accepted = [:]
            if let waiter = state.waiter {
                state.waiter = nil
                return .success((waiter, ordered))
            }
            state.completed = ordered
            return .success(nil)
        }
        switch outcome {
        case .failure(let error):
            throw error
        case .success(let resume?):
            resume.0.resume(returning: resume.1)
        case .success(nil):
            break
        }
    }

    /// The outstanding batch's results in call order, once every call is answered.
    ///
    /// - Throws: `CancellationError` when the waiting task is cancelled or the collector is closed.
    func results() async throws -> [ToolResultEnvelope] {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[ToolResultEnvelope], any Error>) in
                let immediate: Result<[ToolResultEnvelope], any Error>? = state.withLock { state in
                    if let completed = state.completed {
                        state.completed = nil
                        return .success(completed)
                    }
                    if state.closed || Task.isCancelled { return .failure(CancellationError()) }
                    state.waiter = continuation
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<[ToolResultEnvelope], any Error>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Refuses further submissions and releases buffered results and the waiter. Idempotent.
    func close() {
        let waiter = state.withLock { state -> CheckedContinuation<[ToolResultEnvelope], any Error>? in
            state.closed = true
            state.batch = []
            state.accepted = [:]
            state.completed = nil
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(throwing: CancellationError())
    }

    private static func invalid(_ message: String) -> AgentRuntimeError {
        AgentRuntimeError(code: .invalidToolResult, message: message)
    }
}
