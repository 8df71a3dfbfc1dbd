import CodexCore
import CodexSchema

extension TurnDriver {
    /// Runs one batch of requested calls within the turn's tool-call budget: the whole batch must fit
    /// before any executor starts, and calls count even when denied, unknown, refused or repeated.
    /// Consecutive parallel-safe calls run together, at most `maximumParallelToolCalls` at a time; any
    /// other call runs alone (``ToolCallSchedule``). Lifecycle events may finish out of order; results
    /// are submitted, and calls and results recorded, in the model's call order. A call ID answered
    /// earlier in the turn is answered again from that result without running; the same ID with other
    /// arguments fails the turn with `responses_tool_call_conflict`.
    ///
    /// A durable turn journals the batch before any executor starts, each executor's start and each
    /// result, then the next pass's request once the round is stored. `resumed` is a batch an earlier
    /// process left unfinished: it was journaled and counted then; its finished results are reused, and
    /// its calls cut short follow their replay safety and the recovery policy. Without `turnStream` (a
    /// resumed batch, before the backend's turn starts) results are stored, not submitted: the backend
    /// replays them from the history.
    func runTools(
        _ requested: [ToolInvocation], progress: inout Progress, turnStream: AgentTurnStream?, resumed: TurnResumePoint.Batch? = nil
    ) async throws {
        if resumed == nil {
            guard runtime.configuration.turnLimits.allowsToolBatch(of: requested.count, afterUsing: progress.toolCalls) else {
                throw AgentRuntimeError.executionLimitExceeded(.toolCalls)
            }
            progress.toolCalls += requested.count
        }
        let invocations = requested.map { call in
            var invocation = call
            invocation.threadID = plan.threadID
            invocation.turnID = plan.turnID
            return invocation
        }
        if resumed == nil { try await journal(.toolCalls(pass: progress.pass, items: progress.pendingItems, calls: invocations)) }
        // Repeats (earlier in the turn, or earlier in this batch) are answered without running.
        var firstIndex: [ToolInvocationID: Int] = [:]
        var toRun: [Int] = []
        for (index, invocation) in invocations.enumerated() {
            let earlierArguments = progress.answeredCalls[invocation.id]?.arguments ?? firstIndex[invocation.id].map { invocations[$0].arguments }
            if let earlierArguments {
                guard earlierArguments == invocation.arguments else {
                    throw AgentRuntimeError(
                        code: .responsesToolCallConflict, message: "the model repeated tool call \(invocation.id.rawValue) with different arguments"
                    )
                }
                continue
            }
            firstIndex[invocation.id] = index
            toRun.append(index)
        }
        var results = [ToolResultEnvelope?](repeating: nil, count: invocations.count)
        if let resumed { try await answerFromJournal(resumed, invocations: invocations, toRun: toRun, into: &results) }
        let runnable = toRun.filter { results[$0] == nil }
        if let first = runnable.first { try await showPending(.toolResult, for: invocations[first]) }
        let parallelSafe = runnable.map { plan.tools.entry(named: invocations[$0].toolName)?.isParallelSafe ?? true }
        for segment in ToolCallSchedule.segments(parallelSafe) {
            switch segment {
            case .alone(let position):
                let index = runnable[position]
                results[index] = try await runCall(invocations[index])
            case .together(let positions):
                for (index, result) in try await runTogether(positions.map { runnable[$0] }, of: invocations) { results[index] = result }
            }
        }
        var calls: [AgentHistoryItem] = []
        var outputs: [AgentHistoryItem] = []
        var resubmitted: Set<ToolInvocationID> = []
        for (index, invocation) in invocations.enumerated() {
            if let result = results[index] {
                try await turnStream?.submit(result, for: invocation)
                progress.answeredCalls[invocation.id] = (invocation.arguments, result)
                calls.append(.toolCall(invocation))
                outputs.append(.toolResult(result))
            } else {
                // A repeat: not run and not recorded twice. One repeating an earlier batch is answered
                // with that result; a duplicate within this batch was answered with its first occurrence.
                runtime.configuration.logSink.record(AgentLogEvent(
                    level: .notice, category: .tools, name: "tools.call.repeated", metadata: ["tool": invocation.toolName]
                ))
                if firstIndex[invocation.id] == nil, resubmitted.insert(invocation.id).inserted, let answered = progress.answeredCalls[invocation.id] {
                    try await turnStream?.submit(answered.result, for: invocation)
                }
            }
        }
        let ran = toRun.compactMap { results[$0] }
        // Images given as bytes were counted when they were kept; downloaded ones fill what is left.
        let attached = toolOutputs.takeImages(for: ran.map(\.invocationID))
        let downloaded = try await runtime.toolImages.attachments(for: ran)
        if downloaded.count > AgentImageAttachment.maximumPerMessage - attached.count {
            runtime.configuration.logSink.record(AgentLogEvent(
                level: .notice, category: .tools, name: "tools.image.omitted",
                metadata: ["reason": "too_many_images", "count": String(downloaded.count - (AgentImageAttachment.maximumPerMessage - attached.count))]
            ))
        }
        let images = attached + downloaded.prefix(AgentImageAttachment.maximumPerMessage - attached.count)
        if !runnable.isEmpty { try await showPending(nil, for: nil) }
        progress.pendingItems += calls + outputs
        if !images.isEmpty {
            // Tool images are kept as an assistant message (like generated images), not sent back to the
            // provider on replay.
            let message = AgentMessage(threadID: plan.threadID, role: .assistant, text: "", images: images)
            progress.pendingItems.append(.message(message))
            progress.pendingMessages.append(message)
        }
        try await flush(&progress)
        try await journalNextRequest(round: calls + outputs, progress: &progress)
    }

    /// Shows the thread's one outstanding wait (status `waiting`), or clears it (back to `running`),
    /// for persistent turns; written through the runtime's ordered queue before the wait begins.
    func showPending(_ kind: AgentThreadPendingState.Kind?, for invocation: ToolInvocation?, approval: AgentApprovalID? = nil) async throws {
        guard plan.persistent else { return }
        let threadID = plan.threadID
        let now = runtime.configuration.wallClock.now()
        let pending = kind.flatMap { kind in
            invocation.map { AgentThreadPendingState(kind: kind, turnID: plan.turnID, invocation: $0, approvalRequestID: approval, since: now) }
        }
        try await runtime.writer.wait(runtime.writer.enqueue { store in
            guard var thread = try await store.thread(threadID) else { return }
            thread.pending = pending
            thread.settle(pending == nil ? .running : .waiting, at: now)
            try await store.upsertThread(thread)
        })
    }

    /// Runs the calls at `indexes` together, at most the runtime's cap at a time; returns their results
    /// by index. The turn task sends the started events of the calls it starts in one queue operation
    /// (a batch wakes the host's consumer once for them), then runs the segment's last call itself
    /// instead of only waiting for the others; each call sends its finished event the moment it ends.
    /// A thrown error (cancellation) cancels the others and waits for them.
    private func runTogether(_ indexes: [Int], of invocations: [ToolInvocation]) async throws -> [(Int, ToolResultEnvelope)] {
        let cap = runtime.configuration.maximumParallelToolCalls
        return try await withThrowingTaskGroup(of: (Int, ToolResultEnvelope).self) { group in
            var results: [(Int, ToolResultEnvelope)] = []
            var next = 0
            var running = 0
            while next < indexes.count || running > 0 {
                let starting = indexes[next..<min(indexes.count, next + max(0, cap - running))]
                if !starting.isEmpty {
                    try Task.checkCancellation()
                    try await channel.send(contentsOf: starting.map { .toolCallStarted(invocations[$0]) })
                    next += starting.count
                    running += starting.count
                    let inline = next == indexes.count ? starting.last : nil
                    for index in starting where index != inline {
                        let invocation = invocations[index]
                        group.addTask { (index, try await self.finish(invocation)) }
                    }
                    if let inline {
                        results.append((inline, try await finish(invocations[inline])))
                        running -= 1
                        continue
                    }
                }
                if let finished = try await group.next() {
                    results.append(finished)
                    running -= 1
                }
            }
            return results
        }
    }

    /// Runs one call whose started event was sent, and sends its finished event.
    private func finish(_ invocation: ToolInvocation) async throws -> ToolResultEnvelope {
        let result: ToolResultEnvelope
        if let span = ToolTelemetry.start(invocation) {
            do {
                result = try await span.withCurrent { try await execute(invocation).answering(invocation) }
            } catch {
                ToolTelemetry.end(span, toolName: invocation.toolName, error: error)
                throw error
            }
            ToolTelemetry.end(span, result: result)
        } else {
            result = try await execute(invocation).answering(invocation)
        }
        try await journal(.toolFinished(result))
        try await channel.send(.toolCallFinished(result))
        return result
    }

    /// Runs one call with its lifecycle events.
    private func runCall(_ invocation: ToolInvocation) async throws -> ToolResultEnvelope {
        try Task.checkCancellation()
        try await channel.send(.toolCallStarted(invocation))
        return try await finish(invocation)
    }

    /// Runs one call: unknown tools and refused arguments fail without running, approval-gated tools ask
    /// the presenter first (no presenter: denied), executor errors become failed results; cancellation
    /// propagates.
    private func execute(_ invocation: ToolInvocation) async throws -> ToolResultEnvelope {
        guard let entry = plan.tools.entry(named: invocation.toolName) else {
            return .failure(invocation, message: "No tool named '\(invocation.toolName)' is available.")
        }
        let arguments: JSONValue
        switch plan.tools.check(invocation.arguments, for: entry) {
        case .invalid(let reason):
            runtime.configuration.logSink.record(AgentLogEvent(
                level: .notice, category: .tools, name: "tools.arguments.refused", metadata: ["tool": invocation.toolName]
            ))
            return .failure(invocation, message: reason)
        case .valid(let value):
            arguments = value
        }
        let tool = entry.tool
        if plan.durability != nil, tool.definition.approvalPolicy == .requiresApproval || asksBeforeRunningAgain(invocation, tool: tool) {
            if try await durableApproval(for: invocation, tool: tool) == .denied {
                return asksBeforeRunningAgain(invocation, tool: tool) ? Self.unknownOutcome(invocation) : .denied(invocation)
            }
        } else if tool.definition.approvalPolicy == .requiresApproval {
            let request = AgentApprovalRequest(
                threadID: plan.threadID, turnID: plan.turnID, toolInvocation: invocation, title: tool.definition.name,
                message: tool.definition.approvalMessage
            )
            try await showPending(.approval, for: invocation, approval: request.id)
            try await channel.send(.approvalRequested(request))
            let decision: AgentApprovalDecision
            let waitStarted = ToolTelemetry.approvalClock()
            do {
                decision = try await runtime.configuration.approvalPresenter?.requestApproval(request) ?? .denied
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                // A presenter that fails cannot approve: the call is denied.
                decision = .denied
            }
            ToolTelemetry.noteApproval(startedAt: waitStarted, decision: decision)
            try Task.checkCancellation()
            try await showPending(.toolResult, for: invocation)
            try await channel.send(.approvalResolved(AgentApprovalResolution(requestID: request.id, decision: decision)))
            if decision == .denied { return .denied(invocation) }
        }
        let channel = channel
        let hooks = ToolExecutionHooks(
            progress: { progress in try? await channel.send(.progress(progress)) }, outputs: toolOutputs, logSink: runtime.configuration.logSink
        )
        let context = ToolExecutionContext(invocation: invocation, threadID: plan.threadID, turnID: plan.turnID, arguments: arguments, hooks: hooks)
        try await journal(.toolStarted(invocation.id, idempotencyKey: context.idempotencyKey))
        do {
            return try await tool.execute(invocation, context)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            try Task.checkCancellation()
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

extension ToolResultEnvelope {
    /// This result when it answers `invocation`; a result for another identity becomes a failure of it.
    fileprivate func answering(_ invocation: ToolInvocation) -> ToolResultEnvelope {
        matches(invocation) ? self : .failure(invocation, message: "The tool returned a result for another call.")
    }
}
