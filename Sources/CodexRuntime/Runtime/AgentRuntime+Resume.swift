public import CodexCore
import CodexRecovery
import Foundation

extension AgentRuntime {
    /// Continues a durable turn from its last recorded step: one a crashed or killed process left
    /// running, one this runtime stopped because its journal could not be written, or one parked until
    /// an approval was answered. (Needs ``AgentTurnRecoveryPolicy/resume(unfinishedCalls:maximumAttempts:authorizeAttempt:)``.)
    ///
    /// Finished tool results are reused, never run again; a call that started and did not finish runs
    /// again with the same ``ToolExecutionContext/idempotencyKey`` when its tool is idempotent and
    /// otherwise as the policy says; a model request that may already have been sent is sent again only
    /// after the policy's `authorizeAttempt` allows it, within its attempt budget. The turn keeps its
    /// ID; its events begin with `turnStarted` and `progress(.resumed(...))`; its stored history is what
    /// an uninterrupted turn would have stored.
    ///
    /// ```swift
    /// let execution = try await runtime.resumeTurn(turnID, in: threadID)
    /// for try await event in execution.events { … }
    /// ```
    /// - Returns: The running turn's controls and events.
    /// - Throws: ``CodexCore/AgentRuntimeError`` `turn_not_resumable` (the policy does not resume, the turn
    ///   is not the thread's latest, it ended, or it has no journal: a turn left running without one is
    ///   recorded interrupted), `thread_busy` (another live runtime, or this one, runs it; or another
    ///   process claimed it first), `turn_waiting_for_approval` (its approval is not answered yet and
    ///   there is no presenter to ask), `attempts_exhausted` or `attempt_not_authorized` (the turn is
    ///   recorded failed), or what the authorization callback throws (the turn is left as it is).
    public func resumeTurn(_ turnID: AgentTurnID, in threadID: AgentThreadID) async throws -> AgentTurnExecution {
        let policy = configuration.turnRecovery
        guard policy.resumes else { throw Self.notResumable("the runtime's turn recovery policy does not resume turns") }
        let thread = try await resumeThread(threadID)
        guard let turn = try await writer.read({ store in try await store.latestTurn(of: threadID) }), turn.id == turnID else {
            throw Self.notResumable("the turn is not the thread's latest")
        }
        guard turn.status == .running || turn.status == .waitingForApproval else { throw Self.notResumable("the turn ended (\(turn.status.rawValue))") }
        if turn.status == .running {
            guard activeTurns.activeTurn(in: threadID) == nil, try !ownership.isAliveElsewhere(turn) else {
                throw AgentRuntimeError(code: .threadBusy, message: "a live runtime runs the turn")
            }
        }
        let now = configuration.wallClock.now()
        let entries = try await writer.readJournal { journal in try await journal.journal(of: turnID) }
        guard let point = TurnResumePoint.analyze(entries), point.stage != .committed else {
            if turn.status == .running {
                let ownership = self.ownership
                _ = try await writer.read { store in try await Self.closeAbandonedTurn(of: threadID, in: store, at: now, ownership: ownership) }
            }
            throw Self.notResumable("the turn has no journal to resume from")
        }
        if case .batch(let batch) = point.stage, configuration.approvalPresenter == nil, try await hasUnansweredApproval(batch) {
            throw AgentRuntimeError(code: .turnWaitingForApproval, message: "the turn's approval is not answered yet")
        }
        try activeTurns.reserve(threadID, for: turnID)
        let ownerID = ownership.ownerID
        let claimed: Bool
        do {
            claimed = try await writer.readJournal { journal in try await journal.claimTurn(turnID, of: threadID, from: turn.ownerID, to: ownerID, at: now) }
        } catch {
            activeTurns.release(threadID, turnID: turnID)
            throw error
        }
        guard claimed else {
            activeTurns.release(threadID, turnID: turnID)
            throw AgentRuntimeError(code: .threadBusy, message: "another runtime resumed the turn first")
        }
        var running = turn
        running.status = .running
        running.ownerID = ownerID
        let attempt: Int
        do {
            attempt = try await authorizeResend(point, turn: running, policy: policy)
        } catch let refusal as AgentRuntimeError where refusal.code == .attemptsExhausted || refusal.code == .attemptNotAuthorized {
            try? await writer.finish(recordEnd(of: running, status: .failed, failure: refusal, items: []))
            activeTurns.release(threadID, turnID: turnID)
            throw refusal
        } catch {
            activeTurns.release(threadID, turnID: turnID)
            throw error
        }
        configuration.logSink.record(AgentLogEvent(
            level: .notice, category: .runtime, name: "runtime.turn.resumed", metadata: ["thread_id": threadID.rawValue, "turn_id": turnID.rawValue]
        ))
        return launch(resumedPlan(point, turn: running, thread: thread, attempt: attempt, policy: policy, tools: try await turnTools.current()), outcome: nil)
    }

    /// The approvals stored in the state store (pending and answered), oldest first: those of `threadID`,
    /// or of every thread. (Needs a store that keeps turn journals.)
    public func approvals(in threadID: AgentThreadID? = nil) async throws -> [StoredApproval] {
        try await writer.readJournal { journal in try await journal.approvals(in: threadID) }
    }

    /// Answers a stored approval, from this process or any other on the same store. The turn waiting for
    /// it continues when resumed (``resumeTurn(_:in:)``, ``recoverAbandonedTurns()``).
    /// - Throws: ``CodexCore/AgentRuntimeError`` `approval_not_found`; `approval_stale` when the tool's
    ///   definition (in this runtime) or the call's arguments no longer match what was asked, or when it
    ///   was already answered otherwise.
    @discardableResult
    public func answerApproval(_ id: AgentApprovalID, _ decision: AgentApprovalDecision) async throws -> StoredApproval {
        guard let stored = try await writer.readJournal({ journal in try await journal.approval(id) }) else {
            throw AgentRuntimeError(code: .approvalNotFound, message: "no such approval")
        }
        let invocation = stored.request.toolInvocation
        if let tool = try await turnTools.current().entry(named: invocation.toolName)?.tool, tool.definition.approvalDigest(arguments: invocation.arguments) != stored.digest {
            throw AgentRuntimeError(code: .approvalStale, message: "the tool's definition or the call's arguments changed since the approval was asked")
        }
        let now = configuration.wallClock.now()
        do {
            return try await writer.readJournal { journal in try await journal.answerApproval(id, decision: decision, expectedDigest: stored.digest, at: now) }
        } catch let error as AgentRuntimeError where error.code == .storageConflict {
            throw AgentRuntimeError(code: .approvalStale, message: "the approval was already answered otherwise", underlying: error)
        }
    }

    /// ``recoverAbandonedTurns()`` under the resume policy: each thread's durable turn that no live
    /// runtime runs is resumed and run to its end (its events are read and dropped; the store keeps the
    /// result), or closed when it has no journal.
    func resumeAbandonedTurns() async throws -> Int {
        var handled = 0
        for thread in try await threads() where thread.status != .idle && activeTurns.activeTurn(in: thread.id) == nil {
            guard let turn = try await writer.read({ store in try await store.latestTurn(of: thread.id) }),
                  turn.status == .running || turn.status == .waitingForApproval else { continue }
            do {
                let execution = try await resumeTurn(turn.id, in: thread.id)
                handled += 1
                do {
                    for try await _ in execution.events {}
                } catch is CancellationError {
                    try Task.checkCancellation()
                } catch {
                    // The turn ended failed or parked again: its record says so.
                }
            } catch let error as AgentRuntimeError where error.code == .turnNotResumable {
                handled += 1
            } catch let error as AgentRuntimeError where [.threadBusy, .turnWaitingForApproval, .attemptNotAuthorized, .attemptsExhausted].contains(error.code) {
                continue
            }
        }
        return handled
    }

    /// Whether a batch waits for an approval nobody answered yet (in the journal or the store).
    private func hasUnansweredApproval(_ batch: TurnResumePoint.Batch) async throws -> Bool {
        for (call, approval) in batch.approvals where approval.decision == nil && batch.finished[call] == nil {
            let stored = try await writer.readJournal { journal in try await journal.approval(approval.request.id) }
            if stored?.decision == nil { return true }
        }
        return false
    }

    /// The attempt the resumed turn's first request is: 1 when the journal shows it was never sent;
    /// otherwise the next, once the host authorizes it within the budget.
    private func authorizeResend(_ point: TurnResumePoint, turn: AgentTurn, policy: AgentTurnRecoveryPolicy) async throws -> Int {
        guard case .request(let pass, let attempts) = point.stage, attempts > 0 else { return 1 }
        guard attempts < policy.maximumAttempts else {
            throw AgentRuntimeError(code: .attemptsExhausted, message: "model request \(pass) of the turn used its \(policy.maximumAttempts) attempts")
        }
        let attempt = AgentRecoveryAttempt(
            operationID: Self.uuid("turn \(turn.id.rawValue)"), id: Self.uuid("turn \(turn.id.rawValue) pass \(pass) attempt \(attempts + 1)"),
            number: attempts + 1, maximumAttempts: policy.maximumAttempts, reason: .replacement,
            previousFailure: AgentRecoveryFailure(code: AgentRuntimeError.Code.responsesStreamDisconnected.rawValue)
        )
        guard try await policy.authorizeAttempt(attempt) else {
            throw AgentRuntimeError(code: .attemptNotAuthorized, message: "the host declined to send model request \(pass) of the turn again")
        }
        return attempts + 1
    }

    /// The plan of a resumed turn: its journaled settings, the runtime's tools, an empty request (its
    /// input is in the history the backend replays), and where the journal left it.
    private func resumedPlan(
        _ point: TurnResumePoint, turn: AgentTurn, thread: AgentThread, attempt: Int, policy: AgentTurnRecoveryPolicy, tools: ToolRegistry
    ) -> TurnPlan {
        let settings = point.settings
        var request = AgentBackendTurnRequest(
            threadID: thread.id, turnID: turn.id, request: Request(text: "", executionMode: .threaded), model: settings.model,
            reasoningEffort: settings.reasoningEffort, instructions: settings.instructions, skillInstructions: settings.skillInstructions,
            tools: tools.definitions
        )
        request.memoryInstructions = settings.memoryInstructions
        request.memoryPlacement = settings.memoryPlacement
        var pass = 1
        var batch: TurnResumePoint.Batch?
        switch point.stage {
        case .request(let next, _): pass = next
        case .batch(let unfinished):
            pass = unfinished.pass
            batch = unfinished
        case .committed: break
        }
        let durability = TurnDurability(
            journal: TurnJournalWriter(writer: writer, turn: turn.id, thread: thread.id, nextSequence: point.length), policy: policy,
            pass: pass, attempt: attempt, toolCallsUsed: point.toolCallsUsed, batch: batch, isResumed: true
        )
        return TurnPlan(thread: thread, turn: turn, backendRequest: request, structured: .none, memoryApplication: nil, durability: durability, tools: tools)
    }

    private static func notResumable(_ message: String) -> AgentRuntimeError {
        AgentRuntimeError(code: .turnNotResumable, message: message)
    }

    /// A UUID derived from `text` (the first 16 bytes of its SHA-256, as a version 4 layout), so a turn's
    /// attempt has the same ID every time it is authorized.
    static func uuid(_ text: String) -> UUID {
        var bytes = Array(SHA256.hash(Array(text.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
