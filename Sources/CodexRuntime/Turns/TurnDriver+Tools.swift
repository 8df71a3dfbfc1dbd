import CodexCore

extension TurnDriver {
    /// Runs one batch of requested calls (serially in this release), within the turn's tool-call budget:
    /// the whole batch must fit before any executor starts; calls count even when denied or unknown.
    func runTools(_ requested: [ToolInvocation], progress: inout Progress, turnStream: AgentTurnStream) async throws {
        guard runtime.configuration.turnLimits.allowsToolBatch(of: requested.count, afterUsing: progress.toolCalls) else {
            throw AgentRuntimeError.executionLimitExceeded(.toolCalls)
        }
        progress.toolCalls += requested.count
        var calls: [AgentHistoryItem] = []
        var results: [AgentHistoryItem] = []
        for var invocation in requested {
            try Task.checkCancellation()
            invocation.threadID = plan.threadID
            invocation.turnID = plan.turnID
            try await channel.send(.toolCallStarted(invocation))
            var result = try await execute(invocation)
            if !result.matches(invocation) {
                result = .failure(invocation, message: "The tool returned a result for another call.")
            }
            try await channel.send(.toolCallFinished(result))
            try await turnStream.submitToolResult(result)
            calls.append(.toolCall(invocation))
            results.append(.toolResult(result))
        }
        progress.pendingItems += calls + results
        try await flush(&progress)
    }

    /// Runs one call: unknown tools fail, approval-gated tools ask the presenter first (no presenter:
    /// denied), executor errors become failed results; cancellation propagates.
    private func execute(_ invocation: ToolInvocation) async throws -> ToolResultEnvelope {
        guard let tool = runtime.configuration.tools.first(where: { $0.definition.name == invocation.toolName }) else {
            return .failure(invocation, message: "No tool named '\(invocation.toolName)' is available.")
        }
        if tool.definition.approvalPolicy == .requiresApproval {
            let request = AgentApprovalRequest(
                threadID: plan.threadID, turnID: plan.turnID, toolInvocation: invocation, title: tool.definition.name,
                message: tool.definition.approvalMessage
            )
            try await channel.send(.approvalRequested(request))
            let decision: AgentApprovalDecision
            do {
                decision = try await runtime.configuration.approvalPresenter?.requestApproval(request) ?? .denied
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                // A presenter that fails cannot approve: the call is denied.
                decision = .denied
            }
            try await channel.send(.approvalResolved(AgentApprovalResolution(requestID: request.id, decision: decision)))
            if decision == .denied { return .denied(invocation) }
        }
        do {
            return try await tool.execute(invocation)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            return .failure(invocation, message: "The tool failed.")
        }
    }

    /// Persists what the turn produced so far (whole tool rounds: reasoning, messages, calls and their
    /// results), for persistent turns, and reports the committed messages.
    func flush(_ progress: inout Progress) async throws {
        guard !progress.pendingItems.isEmpty else { return }
        let items = progress.pendingItems
        let messages = progress.pendingMessages
        progress.pendingItems = []
        progress.pendingMessages = []
        if plan.persistent {
            let threadID = plan.threadID
            try await runtime.writer.wait(runtime.writer.enqueue { store in try await store.appendHistory(items, to: threadID) })
        }
        for message in messages { try await channel.send(.messageCommitted(message)) }
    }
}
