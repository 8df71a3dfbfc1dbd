import CodexCore

/// State store write spans (`codexkit.storage.commit`): one per write of the runtime's ordered queue
/// (history, the turn's commit), with `error.type` when it failed. Their duration is the span's; no
/// separate metric is kept.
enum StorageTelemetry {
    /// Ends a write's span.
    static func end(_ span: AgentSpan?, failure: AgentRuntimeError?) {
        guard let span else { return }
        if let failure { span.recordFailure(code: failure.code.rawValue) }
        span.end()
    }
}
