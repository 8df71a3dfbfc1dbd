import CodexCore

/// State store write spans (`codexkit.storage.commit`) and their duration metric.
enum StorageTelemetry {
    /// Ends a write's span and records its duration.
    static func end(_ span: AgentSpan?, failure: AgentRuntimeError?) {
        guard let span else { return }
        if let failure { span.recordFailure(code: failure.code.rawValue) }
        let now = AgentTelemetry.unixNano(span.telemetry.wallClock.now())
        span.end(at: now)
        var attributes: AgentTelemetryAttributes = [:]
        if let failure { attributes["error.type"] = .string(failure.code.rawValue) }
        let seconds = now >= span.startTimeUnixNano ? Double(now - span.startTimeUnixNano) / 1e9 : 0
        span.telemetry.metrics.record(.storageCommitDuration, seconds, attributes: attributes)
    }
}
