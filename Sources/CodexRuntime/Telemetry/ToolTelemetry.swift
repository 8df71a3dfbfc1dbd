import CodexCore

/// Tool call spans (`execute_tool <name>`) and the `codexkit.tool.duration` metric.
enum ToolTelemetry {
    /// Starts a tool call's span under the current (turn) span, or `nil` without telemetry.
    static func start(_ invocation: ToolInvocation) -> AgentSpan? {
        guard let parent = AgentSpan.current else { return nil }
        var attributes: AgentTelemetryAttributes = [
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": .string(invocation.toolName),
            "gen_ai.tool.call.id": .string(invocation.id.rawValue),
            "gen_ai.tool.type": "function",
        ]
        if let content = parent.telemetry.content(invocation.arguments) { attributes["gen_ai.tool.call.arguments"] = content }
        return parent.child("execute_tool \(invocation.toolName)", attributes: attributes)
    }

    /// Ends a tool call's span with its result's status (`success`, `failure`, `denied`).
    static func end(_ span: AgentSpan?, result: ToolResultEnvelope) {
        guard let span else { return }
        span.setAttribute("codexkit.tool.outcome", .string(result.status.rawValue))
        if let content = span.telemetry.content(result.joinedText) { span.setAttribute("gen_ai.tool.call.result", content) }
        if result.status != .success { span.recordFailure(code: "tool_\(result.status.rawValue)") }
        finish(span, outcome: result.status.rawValue, toolName: result.toolName)
    }

    /// Ends a tool call's span cut short by cancellation or a turn failure.
    static func end(_ span: AgentSpan?, toolName: String, error: any Error) {
        guard let span else { return }
        let outcome = error is CancellationError ? "cancelled" : "error"
        span.setAttribute("codexkit.tool.outcome", .string(outcome))
        span.recordFailure(code: (error as? AgentRuntimeError)?.code.rawValue ?? outcome)
        finish(span, outcome: outcome, toolName: toolName)
    }

    /// Notes an approval's wait and decision on the current tool span.
    static func noteApproval(startedAt start: UInt64?, decision: AgentApprovalDecision) {
        guard let span = AgentSpan.current, let start, span.attribute("gen_ai.operation.name") == "execute_tool" else { return }
        let now = AgentTelemetry.unixNano(span.telemetry.wallClock.now())
        span.setAttribute("codexkit.tool.approval.decision", .string(decision == .denied ? "denied" : "approved"))
        span.setAttribute("codexkit.tool.approval.wait", .double(now >= start ? Double(now - start) / 1e9 : 0))
    }

    /// The current time for an approval's wait, when a tool span is current.
    static func approvalClock() -> UInt64? {
        AgentSpan.current.map { AgentTelemetry.unixNano($0.telemetry.wallClock.now()) }
    }

    private static func finish(_ span: AgentSpan, outcome: String, toolName: String) {
        let now = AgentTelemetry.unixNano(span.telemetry.wallClock.now())
        span.end(at: now)
        let seconds = now >= span.startTimeUnixNano ? Double(now - span.startTimeUnixNano) / 1e9 : 0
        span.telemetry.metrics.record(.toolDuration, seconds, attributes: [
            "gen_ai.tool.name": .string(toolName), "codexkit.tool.outcome": .string(outcome),
        ])
    }
}
