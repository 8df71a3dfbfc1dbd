import CodexCore

extension TurnDriver {
    /// Adds one response's usage to the state store's ledger (persistent turns, stores that keep one),
    /// through the ordered write queue: before the turn's commit, never waited for. A ledger write that
    /// fails is logged and does not fail the turn. A resumed durable turn numbers its records after
    /// those its earlier drives left.
    func recordUsage(_ usage: AgentUsage, progress: inout Progress) async {
        guard plan.persistent, runtime.writer.keepsUsage else { return }
        if progress.usageSequence == nil {
            var earlier = 0
            if plan.durability?.isResumed == true {
                earlier = (try? await runtime.writer.readUsage(AgentUsageQuery(turnID: plan.turnID)).count) ?? 0
            }
            progress.usageSequence = earlier
        }
        let sequence = progress.usageSequence ?? 0
        progress.usageSequence = sequence + 1
        let record = AgentUsageRecord(
            threadID: plan.threadID, turnID: plan.turnID, sequence: sequence, accountBinding: plan.thread.accountBinding,
            model: plan.backendRequest.model.rawValue, recordedAt: runtime.configuration.wallClock.now(), usage: usage
        )
        let logSink = runtime.configuration.logSink
        let turnID = plan.turnID.rawValue
        runtime.writer.enqueueUsage([record]) { error in
            logSink.record(AgentLogEvent(
                level: .warning, category: .persistence, name: "runtime.usage.record_failed",
                metadata: ["turn_id": turnID, "error_code": error.code.rawValue]
            ))
        }
    }
}
