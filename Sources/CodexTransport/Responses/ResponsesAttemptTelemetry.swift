import CodexCore
import Foundation
import Synchronization

/// The span of one model request attempt (`chat <model>`, kind client) and its metrics: duration, time
/// to first output, tokens. Made only when a span is current (the runtime's turn span), so a request
/// without telemetry costs one task-local read.
final class ResponsesAttemptTelemetry: Sendable {
    let span: AgentSpan
    private let model: String?
    /// Set by the first end: a later one (an interruption after the completion) records nothing.
    private let ended = Atomic<Bool>(false)

    init?(stream: ResponsesEventStream, number: Int) {
        guard let parent = AgentSpan.current else { return nil }
        let server = stream.client.server
        var attributes: AgentTelemetryAttributes = [
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "codexkit.request.attempt": .int(Int64(number)),
            "codexkit.request.maximum_attempts": .int(Int64(stream.client.configuration.retryPolicy.maximumAttempts)),
        ]
        if let model = stream.model { attributes["gen_ai.request.model"] = .string(model) }
        if let host = server.host { attributes["server.address"] = .string(host) }
        if let port = server.port { attributes["server.port"] = .int(Int64(port)) }
        model = stream.model
        span = parent.child(stream.model.map { "chat \($0)" } ?? "chat", kind: .client, attributes: attributes)
    }

    /// The `traceparent` to send, when the host allowed it.
    var traceparent: String? {
        span.telemetry.options.propagateTraceContext ? span.context.traceparent : nil
    }

    /// Notes the response's status and the provider's request ID (left out when it holds one of the
    /// attempt's `secrets`: a server may echo a credential back anywhere).
    func noteResponse(status: Int, requestID: String?, secrets: [String]) {
        span.setAttribute("http.response.status_code", .int(Int64(status)))
        if let requestID = Self.safe(requestID, secrets: secrets) { span.setAttribute("codexkit.provider.request_id", .string(requestID)) }
    }

    /// `text` unless it contains a secret of 8 characters or more (compared without regard to case).
    static func safe(_ text: String?, secrets: [String]) -> String? {
        guard let text else { return nil }
        let lowered = text.lowercased()
        return secrets.contains { $0.count >= 8 && lowered.contains($0.lowercased()) } ? nil : text
    }

    /// Notes the first output of the response.
    func noteFirstOutput() {
        guard span.attribute("codexkit.response.time_to_first_token") == nil else { return }
        let seconds = secondsSinceStart()
        span.setAttribute("codexkit.response.time_to_first_token", .double(seconds))
        span.telemetry.metrics.record(.timeToFirstChunk, seconds, attributes: baseAttributes())
    }

    /// Ends the span for a completed response, with its usage.
    func complete(_ info: ResponsesResponseInfo) {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var attributes = AgentTelemetryAttributes()
        if let id = info.id { attributes["gen_ai.response.id"] = .string(id) }
        if let served = info.model { attributes["gen_ai.response.model"] = .string(served) }
        if let status = info.status { attributes["gen_ai.response.finish_reasons"] = .strings([status]) }
        AgentTelemetryAttributes.addUsage(info.usage, to: &attributes)
        span.setAttributes(attributes)
        var updates: [AgentMetrics.Update] = []
        if let usage = info.usage {
            updates.reserveCapacity(8)
            var tokenAttributes = baseAttributes()
            for (type, count) in [("input", usage.inputTokens), ("output", usage.outputTokens)] {
                guard let count else { continue }
                tokenAttributes["gen_ai.token.type"] = .string(type)
                updates.append(.record(.tokenUsage, Double(count), tokenAttributes))
            }
            let kinds: [(String, Int?)] = [
                ("input", usage.inputTokens), ("cached_input", usage.cachedInputTokens), ("cache_write_input", usage.cacheWriteInputTokens),
                ("output", usage.outputTokens), ("reasoning_output", usage.reasoningOutputTokens),
            ]
            let model = AgentTelemetryValue.string(model ?? "unknown")
            for (kind, count) in kinds {
                guard let count else { continue }
                updates.append(.add(.tokens, count, ["codexkit.token.type": .string(kind), "gen_ai.request.model": model]))
            }
        }
        span.setStatus(.ok)
        finish(errorType: nil, with: updates)
    }

    /// Ends the span for a failed attempt.
    func end(failure: any Error, willRetry: Bool, secrets: [String]) {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let code = (failure as? AgentRuntimeError)?.code.rawValue ?? (failure is CancellationError ? "cancelled" : "failed")
        if let requestID = Self.safe((failure as? AgentRuntimeError)?.http?.requestID, secrets: secrets) {
            span.setAttribute("codexkit.provider.request_id", .string(requestID))
        }
        if let status = (failure as? AgentRuntimeError)?.http?.statusCode { span.setAttribute("http.response.status_code", .int(Int64(status))) }
        span.setAttribute("codexkit.request.will_retry", .bool(willRetry))
        span.recordFailure(code: code)
        finish(errorType: code, with: [])
    }

    private func finish(errorType: String?, with updates: [AgentMetrics.Update]) {
        var attributes = baseAttributes()
        if let errorType { attributes["error.type"] = .string(errorType) }
        span.telemetry.metrics.apply(updates + [.record(.operationDuration, secondsSinceStart(), attributes)])
        span.end()
    }

    private func baseAttributes() -> AgentTelemetryAttributes {
        var attributes: AgentTelemetryAttributes = ["gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai"]
        if let model { attributes["gen_ai.request.model"] = .string(model) }
        return attributes
    }

    private func secondsSinceStart() -> Double {
        let now = AgentTelemetry.unixNano(span.telemetry.wallClock.now())
        return now >= span.startTimeUnixNano ? Double(now - span.startTimeUnixNano) / 1e9 : 0
    }
}
