import CodexCore

/// The turn span (`invoke_agent`) and the turn-level metrics, following the OpenTelemetry GenAI
/// conventions where they name a thing and `codexkit.*` where they do not.
enum TurnTelemetry {
    /// The provider name the GenAI conventions give OpenAI.
    static let providerName: AgentTelemetryValue = "openai"

    /// Starts a turn's span (a child of the host's parent, if any), or `nil` without telemetry.
    static func start(_ plan: TurnPlan, telemetry: AgentTelemetry?) -> AgentSpan? {
        guard let telemetry else { return nil }
        var attributes = AgentTelemetryAttributes()
        // Room for what the span ends with (the turn's, its outcome's and its usage's), allocated once.
        attributes.reserveCapacity(20)
        attributes["gen_ai.operation.name"] = "invoke_agent"
        attributes["gen_ai.provider.name"] = providerName
        attributes["gen_ai.conversation.id"] = .string(plan.threadID.rawValue)
        attributes["gen_ai.request.model"] = .string(plan.backendRequest.model.rawValue)
        attributes["codexkit.turn.id"] = .string(plan.turnID.rawValue)
        attributes["codexkit.turn.execution_mode"] = .string(plan.persistent ? "threaded" : "ephemeral")
        if let effort = plan.backendRequest.reasoningEffort { attributes["codexkit.request.reasoning_effort"] = .string(effort.rawValue) }
        if plan.durability != nil { attributes["codexkit.turn.durable"] = true }
        if let content = telemetry.content(plan.backendRequest.request.text) { attributes["gen_ai.input.messages"] = content }
        return telemetry.startRootSpan("invoke_agent", attributes: attributes)
    }

    /// Ends a turn's span with its outcome (`completed`, `failed`, `interrupted`, `waiting_for_approval`),
    /// and counts it.
    static func end(
        _ span: AgentSpan?, outcome: String, usage: AgentUsage? = nil, failureCode: String? = nil, output: String? = nil,
        eventQueuePeak: Int
    ) {
        guard let span else { return }
        let content = output.flatMap { span.telemetry.content($0) }
        span.updateAttributes { attributes in
            attributes["codexkit.turn.outcome"] = .string(outcome)
            AgentTelemetryAttributes.addUsage(usage, to: &attributes)
            if let content { attributes["gen_ai.output.messages"] = content }
        }
        if let failureCode { span.recordFailure(code: failureCode) }
        let metrics = span.telemetry.metrics
        let series = metrics.handles(memo: AgentMetrics.MemoKey("turn", outcome)) {
            [(.turns, ["codexkit.turn.outcome": .string(outcome)]), (.eventQueueHighWater, [:])]
        }
        metrics.apply(bound: [.add(series.first ?? nil, 1), .set(series.last ?? nil, Double(eventQueuePeak))])
        span.end()
    }

    /// Records rate-limit windows as `codexkit.rate_limit.remaining` gauges.
    static func record(_ limits: [AgentRateLimitSnapshot], metrics: AgentMetrics) {
        for snapshot in limits {
            for (window, value) in [("primary", snapshot.primary), ("secondary", snapshot.secondary)] {
                guard let value else { continue }
                metrics.set(.rateLimitRemaining, value.remainingPercent, attributes: [
                    "codexkit.rate_limit.family": .string(snapshot.limitID), "codexkit.rate_limit.window": .string(window),
                ])
            }
        }
    }
}
