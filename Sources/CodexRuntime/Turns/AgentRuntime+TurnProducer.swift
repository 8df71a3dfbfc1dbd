import CodexCore
import Foundation

/// What a successful drive leaves to commit.
struct TurnSuccess: Sendable {
    var summary: AgentTurnSummary
    var items: [AgentHistoryItem]
    var messages: [AgentMessage]
    var value: (any Sendable)?
}

extension AgentRuntime {
    /// Starts the producer task of an accepted turn and returns its event stream and its controls.
    func launch(_ plan: TurnPlan, outcome: TurnOutcome?) -> AgentTurnExecution {
        let channel = AgentEventChannel<AgentEvent>(capacity: configuration.maximumBufferedEvents)
        let cancellation = TurnCancellation()
        // Started here, in the caller's task, so the turn joins the host's trace parent.
        let span = TurnTelemetry.start(plan, telemetry: configuration.telemetry)
        let producer = Task {
            await AgentSpan.$current.withValue(span) {
                await self.produce(plan, channel: channel, cancellation: cancellation, outcome: outcome)
            }
        }
        channel.onConsumerGone {
            cancellation.note("cancelled")
            producer.cancel()
        }
        if plan.persistent {
            activeTurns.attach(plan.threadID, turnID: plan.turnID) {
                cancellation.note("interrupted_by_host")
                producer.cancel()
            }
        }
        let activeTurns = self.activeTurns
        let threadID = plan.threadID
        let turnID = plan.turnID
        let persistent = plan.persistent
        let cancel: @Sendable () -> Void = {
            if persistent {
                try? activeTurns.interrupt(in: threadID, expectedTurnID: turnID)
            } else {
                cancellation.note("interrupted_by_host")
                producer.cancel()
            }
        }
        return AgentTurnExecution(
            id: plan.turnID, threadID: plan.threadID, events: AgentEventStream(channel), readiness: plan.readiness, cancelAction: cancel, runtime: self
        )
    }

    /// Runs the turn within its duration budget, then commits, fails or records the interruption, and
    /// ends the stream.
    private func produce(_ plan: TurnPlan, channel: AgentEventChannel<AgentEvent>, cancellation: TurnCancellation, outcome: TurnOutcome?) async {
        let driver = TurnDriver(runtime: self, plan: plan, channel: channel)
        do {
            try await channel.send(.turnStarted(plan.turn))
            let success = try await withDurationBudget { try await driver.drive() }
            try await commit(success, plan: plan, channel: channel, outcome: outcome)
        } catch {
            plan.readiness.fail(error)
            await end(plan, after: error, channel: channel, cancellation: cancellation)
        }
    }

    /// Runs `body`, failing with the `.duration` execution limit when the budget runs out first.
    private func withDurationBudget(_ body: @escaping @Sendable () async throws -> TurnSuccess) async throws -> TurnSuccess {
        guard let seconds = configuration.turnLimits.maximumDuration else { return try await body() }
        let clock = configuration.clock
        let total = Duration.milliseconds(Int64((seconds * 1000).rounded(.up)))
        let budget = TurnTimeBudget(total: total, clock: clock)
        return try await withThrowingTaskGroup(of: TurnSuccess?.self) { group in
            group.addTask { try await TurnTimeBudget.$current.withValue(budget) { try await body() } }
            group.addTask {
                // In slices: the budget is nearly always cancelled when the turn ends first.
                try await clock.sleepInSlices(for: total)
                throw AgentRuntimeError.executionLimitExceeded(.duration)
            }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let success = next { return success }
            }
            throw CancellationError()
        }
    }

    /// Commits a valid completion (whatever happens to the consumer meanwhile), then emits the committed
    /// messages and `turnCompleted`.
    private func commit(_ completed: TurnSuccess, plan: TurnPlan, channel: AgentEventChannel<AgentEvent>, outcome: TurnOutcome?) async throws {
        var success = completed
        success.summary.memoryApplication = plan.memoryApplication
        if plan.persistent {
            guard activeTurns.markCommitting(plan.threadID, turnID: plan.turnID) else { throw CancellationError() }
            let handle = recordEnd(
                of: plan.turn, status: .completed, failure: nil, items: success.items, usage: success.summary.usage,
                memoryApplication: plan.memoryApplication
            )
            try await writer.finish(handle)
            // The journal's last word; the commit above is what counts (a crash between the two leaves a
            // completed turn, which is never resumed, and a failure here changes nothing).
            try? await plan.durability?.journal.record(.committed)
            activeTurns.release(plan.threadID, turnID: plan.turnID)
            startAutomaticCapture(plan, success: success)
        }
        outcome?.record(value: success.value, summary: success.summary)
        TurnTelemetry.end(
            AgentSpan.current, outcome: "completed", usage: success.summary.usage, output: success.summary.finalMessage?.text,
            eventQueuePeak: channel.peakBufferedCount
        )
        configuration.logSink.record(AgentLogEvent(
            level: .info, category: .runtime, name: "runtime.turn.completed",
            metadata: ["thread_id": plan.threadID.rawValue, "turn_id": plan.turnID.rawValue]
        ))
        // The turn is committed: report it even if this task is cancelled now (only a consumer that is
        // gone stops the reports).
        await Task {
            for message in success.messages { try? await channel.send(.messageCommitted(message)) }
            try? channel.sendLifecycle(.turnCompleted(success.summary))
            channel.finish()
        }.value
    }

    /// Records and reports a failed or interrupted turn.
    private func end(_ plan: TurnPlan, after error: any Error, channel: AgentEventChannel<AgentEvent>, cancellation: TurnCancellation) async {
        if plan.persistent, plan.durability != nil, await endDurable(plan, after: error, channel: channel) { return }
        let limitHit = (error as? AgentRuntimeError)?.executionLimit != nil
        let interrupted = !limitHit && (Task.isCancelled || error is CancellationError || error is AgentEventChannel<AgentEvent>.SendFailure)
        if interrupted {
            if plan.persistent {
                try? await writer.finish(recordEnd(of: plan.turn, status: .interrupted, failure: nil, items: []))
                activeTurns.release(plan.threadID, turnID: plan.turnID)
            }
            TurnTelemetry.end(AgentSpan.current, outcome: "interrupted", eventQueuePeak: channel.peakBufferedCount)
            configuration.logSink.record(AgentLogEvent(
                level: .notice, category: .runtime, name: "runtime.turn.interrupted",
                metadata: ["thread_id": plan.threadID.rawValue, "turn_id": plan.turnID.rawValue, "reason": cancellation.text]
            ))
            try? channel.sendLifecycle(.turnInterrupted(AgentTurnInterruption(turnID: plan.turnID, threadID: plan.threadID, reason: cancellation.text)))
            channel.finish(throwing: CancellationError())
            return
        }
        let failure = (error as? AgentRuntimeError)
            ?? AgentRuntimeError(code: .providerError, message: "the backend failed", underlying: error)
        if plan.persistent {
            try? await writer.finish(recordEnd(of: plan.turn, status: .failed, failure: failure, items: []))
            activeTurns.release(plan.threadID, turnID: plan.turnID)
        }
        TurnTelemetry.end(AgentSpan.current, outcome: "failed", failureCode: failure.code.rawValue, eventQueuePeak: channel.peakBufferedCount)
        configuration.logSink.record(AgentLogEvent(
            level: .error, category: .runtime, name: "runtime.turn.failed",
            metadata: ["thread_id": plan.threadID.rawValue, "turn_id": plan.turnID.rawValue, "error_code": failure.code.rawValue]
        ))
        try? channel.sendLifecycle(.turnFailed(failure))
        channel.finish(throwing: failure)
    }

    /// The ends only a durable turn has: parked until an approval is answered (recorded
    /// `waiting_for_approval`, owned by no runtime, the thread showing the wait), or stopped by a journal
    /// it could not write (left running under this runtime, so ``resumeTurn(_:in:)`` continues it once the
    /// store works again). Returns whether `error` was one of them.
    private func endDurable(_ plan: TurnPlan, after error: any Error, channel: AgentEventChannel<AgentEvent>) async -> Bool {
        let metadata = ["thread_id": plan.threadID.rawValue, "turn_id": plan.turnID.rawValue]
        if let parked = error as? TurnParked {
            var turn = plan.turn
            turn.status = .waitingForApproval
            turn.ownerID = nil
            let record = turn
            try? await writer.finish(writer.enqueue { store in try await store.upsertTurn(record) })
            activeTurns.release(plan.threadID, turnID: plan.turnID)
            TurnTelemetry.end(AgentSpan.current, outcome: "waiting_for_approval", eventQueuePeak: channel.peakBufferedCount)
            configuration.logSink.record(AgentLogEvent(level: .notice, category: .runtime, name: "runtime.turn.parked", metadata: metadata))
            try? channel.sendLifecycle(.turnInterrupted(AgentTurnInterruption(turnID: plan.turnID, threadID: plan.threadID, reason: "waiting_for_approval")))
            channel.finish(throwing: AgentRuntimeError(
                code: .turnWaitingForApproval, message: "the turn waits for approval \(parked.request.id.rawValue); answer it, then resume the turn"
            ))
            return true
        }
        if let failure = error as? TurnJournalFailure {
            activeTurns.release(plan.threadID, turnID: plan.turnID)
            TurnTelemetry.end(AgentSpan.current, outcome: "failed", failureCode: failure.error.code.rawValue, eventQueuePeak: channel.peakBufferedCount)
            configuration.logSink.record(AgentLogEvent(
                level: .error, category: .runtime, name: "runtime.turn.journal_failed", metadata: metadata.merging(["error_code": failure.error.code.rawValue]) { $1 }
            ))
            try? channel.sendLifecycle(.turnFailed(failure.error))
            channel.finish(throwing: failure.error)
            return true
        }
        return false
    }
}
