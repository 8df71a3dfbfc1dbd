public import CodexCore
import Synchronization

/// An approval presenter a host without a UI drives (a server, a CLI, a test): each request waits in
/// ``pending`` and arrives on ``requests`` until ``resolve(_:_:)`` answers it. An interrupted or
/// cancelled turn withdraws its request at once; answering it afterwards returns `false` and changes
/// nothing.
///
/// ```swift
/// let inbox = ApprovalInbox()
/// let runtime = try AgentRuntime(configuration: .init(backend: backend, approvalPresenter: inbox, stateStore: store, tools: tools))
/// Task {
///     for await request in inbox.requests {
///         inbox.resolve(request.id, request.toolInvocation.toolName == "refund" ? .denied : .approved)
///     }
/// }
/// ```
public final class ApprovalInbox: AgentApprovalPresenting {
    private struct Waiting {
        var request: AgentApprovalRequest
        var continuation: CheckedContinuation<AgentApprovalDecision, any Error>
    }

    private let waiting = Mutex<[Waiting]>([])
    private let stream: AsyncStream<AgentApprovalRequest>
    private let continuation: AsyncStream<AgentApprovalRequest>.Continuation

    /// Creates an empty inbox.
    public init() {
        (stream, continuation) = AsyncStream.makeStream(of: AgentApprovalRequest.self)
    }

    /// Every request as it arrives (one consumer). A request withdrawn before it is read is still
    /// delivered; ``resolve(_:_:)`` then returns `false`.
    public var requests: AsyncStream<AgentApprovalRequest> { stream }

    /// The requests waiting for a decision, oldest first.
    public var pending: [AgentApprovalRequest] { waiting.withLock { $0.map(\.request) } }

    /// Answers the pending request `id`.
    ///
    /// - Returns: `true` when it was pending; `false` for an unknown, answered or withdrawn request.
    @discardableResult
    public func resolve(_ id: AgentApprovalID, _ decision: AgentApprovalDecision) -> Bool {
        guard let entry = take(id) else { return false }
        entry.continuation.resume(returning: decision)
        return true
    }

    /// Waits for the host's decision; throws `CancellationError` (and withdraws the request) when the
    /// turn is interrupted or cancelled.
    public func requestApproval(_ request: AgentApprovalRequest) async throws -> AgentApprovalDecision {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<AgentApprovalDecision, any Error>) in
                waiting.withLock { $0.append(Waiting(request: request, continuation: continuation)) }
                self.continuation.yield(request)
                // Cancelled before it was registered: the handler found nothing to withdraw.
                if Task.isCancelled, let entry = take(request.id) { entry.continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            take(request.id)?.continuation.resume(throwing: CancellationError())
        }
    }

    private func take(_ id: AgentApprovalID) -> Waiting? {
        waiting.withLock { waiting in
            guard let index = waiting.firstIndex(where: { $0.request.id == id }) else { return nil }
            return waiting.remove(at: index)
        }
    }

    deinit { continuation.finish() }
}
