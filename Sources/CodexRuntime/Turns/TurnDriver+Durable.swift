import CodexCore
import Foundation

extension TurnDriver {
    /// Records `entry` in a durable turn's journal (nothing for a turn that is not durable).
    func journal(_ entry: @autoclosure () -> TurnJournalEntry) async throws {
        // Made only for a durable turn: an entry can cost a digest (a tool call's idempotency key is a
        // SHA-256) that no other turn needs.
        guard let durability = plan.durability else { return }
        try await durability.journal.record(entry())
    }

    /// Where a drive starts. A durable turn first finishes the batch an earlier process left, then
    /// records the request it is about to send (before the backend's turn starts, so a crash from here
    /// on shows the request as possibly sent); a resumed turn replays its whole stored history, and its
    /// events name the resume.
    func prepareDurableDrive(_ backendRequest: inout AgentBackendTurnRequest) async throws -> Progress {
        var progress = Progress()
        guard let durability = plan.durability else { return progress }
        progress.pass = durability.pass
        progress.toolCalls = durability.toolCallsUsed
        if durability.isResumed { await numberUsageAfterEarlierDrives() }
        if durability.isResumed {
            let reused = durability.batch.map { batch in batch.calls.filter { batch.finished[$0.id] != nil }.count } ?? 0
            let pass = durability.batch?.pass ?? durability.pass
            try await channel.send(.progress(.resumed(pass: pass, attempt: durability.batch == nil ? durability.attempt : 1, reusedResults: reused)))
        }
        if let batch = durability.batch {
            progress.pass = batch.pass
            progress.inputDigest = SHA256.hexDigest(of: Array("resumed \(plan.turnID.rawValue) pass \(batch.pass)".utf8))
            if try await isStored(batch) {
                // Every result was recorded and the round stored; only the next request's entry is missing.
                progress.pass += 1
                try await journal(.modelRequest(pass: progress.pass, attempt: 1, inputDigest: progress.inputDigest))
            } else {
                progress.pendingItems = batch.items
                // The batch's calls were counted when it was asked for.
                try await runTools(batch.calls, progress: &progress, turnStream: nil, resumed: batch)
            }
        }
        if durability.isResumed {
            backendRequest.history = try await runtime.loadHistory(of: plan.threadID)
        }
        if durability.batch == nil {
            // (After a batch, its round's request was recorded when the round was stored.)
            progress.inputDigest = Self.inputDigest(history: backendRequest.history, request: backendRequest.request)
            try await journal(.modelRequest(pass: progress.pass, attempt: durability.attempt, inputDigest: progress.inputDigest))
        }
        return progress
    }

    /// Whether a batch's round is already in the thread's history: every call finished, and the history
    /// holds its results (the drive that stored the round stopped before recording the next request).
    private func isStored(_ batch: TurnResumePoint.Batch) async throws -> Bool {
        guard batch.calls.allSatisfy({ batch.finished[$0.id] != nil }) else { return false }
        let history = try await runtime.loadHistory(of: plan.threadID)
        let start = history.lastIndex { item in
            if case .systemEvent(let event) = item { return event.type == .turnStarted && event.turnID == plan.turnID }
            return false
        } ?? history.startIndex
        var stored = Set<ToolInvocationID>()
        for case .toolResult(let result) in history[start...] { stored.insert(result.invocationID) }
        return batch.calls.allSatisfy { stored.contains($0.id) }
    }

    /// After a stored round: the next pass's request, recorded before the backend can send it.
    func journalNextRequest(round: [AgentHistoryItem], progress: inout Progress) async throws {
        guard plan.durability != nil else { return }
        var material = Array(progress.inputDigest.utf8)
        for item in round { material += item.storageRow() }
        progress.inputDigest = SHA256.hexDigest(of: material)
        progress.pass += 1
        try await journal(.modelRequest(pass: progress.pass, attempt: 1, inputDigest: progress.inputDigest))
    }

    /// A write of a durable turn's records besides its journal (its approvals), failing like the journal.
    private func storeDurably(_ operation: @escaping @Sendable (any TurnJournaling) async throws -> Void) async throws {
        do {
            try await runtime.writer.wait(runtime.writer.enqueueJournal(operation))
        } catch let error as AgentRuntimeError {
            throw TurnJournalFailure(error: error)
        }
    }

    /// SHA-256 of a first request's input: the replayed history's storage rows and the request's text.
    static func inputDigest(history: [AgentHistoryItem], request: Request) -> String {
        var material: [UInt8] = []
        for item in history { material += item.storageRow() }
        material += Array(request.text.utf8)
        return SHA256.hexDigest(of: material)
    }

    /// Fills in the results of a resumed batch that need no executor: results the journal holds are
    /// reused, and a call that was cut short is answered "outcome unknown" when its tool is not
    /// idempotent and the policy says so (recorded like any result).
    func answerFromJournal(
        _ batch: TurnResumePoint.Batch, invocations: [ToolInvocation], toRun: [Int], into results: inout [ToolResultEnvelope?]
    ) async throws {
        for index in toRun {
            let invocation = invocations[index]
            if let finished = batch.finished[invocation.id] {
                results[index] = finished
            } else if batch.started.contains(invocation.id), plan.durability?.policy.unfinishedCalls == .reportUnknownOutcome,
                      plan.tools.entry(named: invocation.toolName)?.tool.definition.replaySafety != .idempotent {
                let result = Self.unknownOutcome(invocation)
                try await journal(.toolFinished(result))
                results[index] = result
            }
        }
    }

    /// Whether a resumed call that was cut short must be approved before it runs again.
    func asksBeforeRunningAgain(_ invocation: ToolInvocation, tool: AgentTool) -> Bool {
        guard let durability = plan.durability, let batch = durability.batch, batch.started.contains(invocation.id) else { return false }
        return durability.policy.unfinishedCalls == .askForApproval && tool.definition.replaySafety != .idempotent
    }

    /// The result of a call that was cut short and is not run again.
    static func unknownOutcome(_ invocation: ToolInvocation) -> ToolResultEnvelope {
        .failure(invocation, message: "The outcome of this call is unknown: the process running it stopped before it finished, and it may or may not have taken effect.")
    }

    /// A durable turn's approval: stored with the digest of the tool and the arguments before anyone is
    /// asked, so it can be answered after a restart or from another process. An answer given earlier
    /// (in the journal or the store) for the same digest is used; one for another digest is stale and
    /// the approval is asked again. Without a presenter the turn parks (``TurnParked``) until it is
    /// answered and the turn resumed.
    func durableApproval(for invocation: ToolInvocation, tool: AgentTool) async throws -> AgentApprovalDecision {
        let digest = tool.definition.approvalDigest(arguments: invocation.arguments)
        let asked = plan.durability?.batch?.approvals[invocation.id]
        var request: AgentApprovalRequest
        if let asked, asked.digest == digest {
            request = asked.request
            let stored = try await runtime.writer.readJournal { journal in try await journal.approval(asked.request.id) }
            if let decision = asked.decision ?? stored?.decision {
                if asked.decision == nil { try await journal(.approvalAnswered(request.id, decision)) }
                try await channel.send(.approvalResolved(AgentApprovalResolution(requestID: request.id, decision: decision)))
                return decision
            }
        } else {
            // An approval stored for this call by a drive that stopped before journaling it is reused, not
            // asked twice.
            let thread = plan.threadID
            let turn = plan.turnID
            let earlier = try await runtime.writer.readJournal { journal in
                try await journal.approvals(in: thread).last { $0.request.turnID == turn && $0.request.toolInvocation.id == invocation.id && $0.digest == digest }
            }
            if let earlier {
                request = earlier.request
            } else {
                let rerun = asksBeforeRunningAgain(invocation, tool: tool)
                request = AgentApprovalRequest(
                    threadID: plan.threadID, turnID: plan.turnID, toolInvocation: invocation, title: tool.definition.name,
                    message: rerun ? "This call was cut short when its process stopped; it may or may not have taken effect. Run it again?" : tool.definition.approvalMessage
                )
                let stored = StoredApproval(request: request, digest: digest, requestedAt: runtime.configuration.wallClock.now())
                try await storeDurably { journal in try await journal.saveApproval(stored) }
            }
            try await journal(.approvalRequested(request, digest: digest))
            if let decision = earlier?.decision {
                try await journal(.approvalAnswered(request.id, decision))
                try await channel.send(.approvalResolved(AgentApprovalResolution(requestID: request.id, decision: decision)))
                return decision
            }
        }
        try await showPending(.approval, for: invocation, approval: request.id)
        try await channel.send(.approvalRequested(request))
        guard let presenter = runtime.configuration.approvalPresenter else { throw TurnParked(request: request) }
        let decision: AgentApprovalDecision
        do {
            decision = try await presenter.requestApproval(request)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            decision = .denied
        }
        try Task.checkCancellation()
        let id = request.id
        let answeredAt = runtime.configuration.wallClock.now()
        try await storeDurably { journal in _ = try await journal.answerApproval(id, decision: decision, expectedDigest: digest, at: answeredAt) }
        try await journal(.approvalAnswered(id, decision))
        try await showPending(.toolResult, for: invocation)
        try await channel.send(.approvalResolved(AgentApprovalResolution(requestID: id, decision: decision)))
        return decision
    }
}
