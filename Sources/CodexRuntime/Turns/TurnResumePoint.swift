import CodexCore

/// Where a durable turn stands, read from its journal alone: what a resumed turn does first. A pure
/// value, tested entry by entry.
struct TurnResumePoint: Sendable, Equatable {
    /// An approval the batch asked for, with its answer when the journal has one.
    struct Approval: Sendable, Equatable {
        var request: AgentApprovalRequest
        var digest: String
        var decision: AgentApprovalDecision?
    }

    /// The tool batch the model asked for at the end of a pass, as far as it got.
    struct Batch: Sendable, Equatable {
        var pass: Int
        /// The pass's reasoning and messages before the calls.
        var items: [AgentHistoryItem]
        var calls: [ToolInvocation]
        /// Results recorded: reused, never run again.
        var finished: [ToolInvocationID: ToolResultEnvelope] = [:]
        /// Calls whose executor started and did not finish.
        var started: Set<ToolInvocationID> = []
        /// Approvals asked for, by call.
        var approvals: [ToolInvocationID: Approval] = [:]
    }

    /// What comes next.
    enum Stage: Sendable, Equatable {
        /// The request of `pass` is to be sent: `attempts` times it was recorded (and may have been sent)
        /// without an answer that completed; 0 when it never was.
        case request(pass: Int, attempts: Int)
        /// A batch to finish before the next pass.
        case batch(Batch)
        /// The turn committed its result: nothing is left.
        case committed
    }

    let settings: TurnJournalSettings
    let stage: Stage
    /// Tool calls the turn asked for so far (its budget's use).
    let toolCallsUsed: Int
    /// The journal's length: the next entry's sequence number.
    let length: Int

    /// The point `entries` reach, or `nil` when they do not begin a durable turn (no `turnStarted` first,
    /// or an entry out of place: the turn is not resumed then).
    static func analyze(_ entries: [TurnJournalEntry]) -> TurnResumePoint? {
        guard case .turnStarted(let settings)? = entries.first else { return nil }
        var stage = Stage.request(pass: 1, attempts: 0)
        var used = 0
        for entry in entries.dropFirst() {
            switch (entry, stage) {
            case (.turnStarted, _):
                return nil
            case (.modelRequest(let pass, let attempt, _), .request(let current, let attempts)):
                guard pass == current else { return nil }
                stage = .request(pass: pass, attempts: max(attempts, attempt))
            case (.modelRequest(let pass, let attempt, _), .batch(let batch)):
                // The batch was finished and stored; the next pass's request follows.
                guard pass == batch.pass + 1, batch.calls.allSatisfy({ batch.finished[$0.id] != nil }) else { return nil }
                stage = .request(pass: pass, attempts: attempt)
            case (.toolCalls(let pass, let items, let calls), .request(let current, _)):
                guard pass == current else { return nil }
                used += calls.count
                stage = .batch(Batch(pass: pass, items: items, calls: calls))
            case (.toolStarted(let id, _), .batch(var batch)):
                batch.started.insert(id)
                stage = .batch(batch)
            case (.toolFinished(let result), .batch(var batch)):
                batch.finished[result.invocationID] = result
                batch.started.remove(result.invocationID)
                stage = .batch(batch)
            case (.approvalRequested(let request, let digest), .batch(var batch)):
                batch.approvals[request.toolInvocation.id] = Approval(request: request, digest: digest)
                stage = .batch(batch)
            case (.approvalAnswered(let id, let decision), .batch(var batch)):
                guard let call = batch.approvals.first(where: { $0.value.request.id == id })?.key else { return nil }
                batch.approvals[call]?.decision = decision
                stage = .batch(batch)
            case (.committed, _):
                stage = .committed
            case (_, .committed):
                return nil
            default:
                return nil
            }
        }
        return TurnResumePoint(settings: settings, stage: stage, toolCallsUsed: used, length: entries.count)
    }
}
