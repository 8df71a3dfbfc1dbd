import CodexCore
import Foundation
import Synchronization

/// The span of one model request attempt (`chat <model>`, kind client) and its metrics: duration, time
/// to first output, tokens. Made only when a span is current (the runtime's turn span), so a request
/// without telemetry costs one task-local read.
final class ResponsesAttemptTelemetry: Sendable {
    let span: AgentSpan
    private let model: String?
    /// The series a successful request updates, located once per model: see ``Series``.
    private let series: [AgentMetrics.Handle?]
    /// Set by the first end: a later one (an interruption after the completion) records nothing.
    private let ended = Atomic<Bool>(false)

    init?(stream: ResponsesEventStream, number: Int) {
        guard let parent = AgentSpan.current else { return nil }
        let server = stream.client.server
        var attributes = AgentTelemetryAttributes()
        // Room for what the span ends with (the request's, the response's and the usage's), allocated once.
        attributes.reserveCapacity(24)
        attributes["gen_ai.operation.name"] = "chat"
        attributes["gen_ai.provider.name"] = "openai"
        attributes["codexkit.request.attempt"] = .int(Int64(number))
        attributes["codexkit.request.maximum_attempts"] = .int(Int64(stream.client.configuration.retryPolicy.maximumAttempts))
        if let model = stream.model { attributes["gen_ai.request.model"] = .string(model) }
        if let host = server.host { attributes["server.address"] = .string(host) }
        if let port = server.port { attributes["server.port"] = .int(Int64(port)) }
        model = stream.model
        span = parent.child(stream.model.map { "chat \($0)" } ?? "chat", kind: .client, attributes: attributes)
        series = Self.series(of: span.telemetry.metrics, model: stream.model)
    }

    /// The series a successful request updates, by position in ``series``: where each sits and, for the
    /// token series, which usage count it takes. The one table both the handles and a request's end read.
    private enum Series: Int, CaseIterable {
        case timeToFirstChunk, duration, usageInput, usageOutput
        case tokensInput, tokensCachedInput, tokensCacheWriteInput, tokensOutput, tokensReasoningOutput

        /// The instrument and attributes of this series for a request of `model`.
        func definition(model: String?) -> (AgentMetricInstrument, AgentTelemetryAttributes) {
            var attributes = ResponsesAttemptTelemetry.baseAttributes(model: model)
            switch self {
            case .timeToFirstChunk: return (.timeToFirstChunk, attributes)
            case .duration: return (.operationDuration, attributes)
            case .usageInput, .usageOutput:
                attributes["gen_ai.token.type"] = .string(self == .usageInput ? "input" : "output")
                return (.tokenUsage, attributes)
            case .tokensInput: return Self.tokens("input", model)
            case .tokensCachedInput: return Self.tokens("cached_input", model)
            case .tokensCacheWriteInput: return Self.tokens("cache_write_input", model)
            case .tokensOutput: return Self.tokens("output", model)
            case .tokensReasoningOutput: return Self.tokens("reasoning_output", model)
            }
        }

        private static func tokens(_ kind: String, _ model: String?) -> (AgentMetricInstrument, AgentTelemetryAttributes) {
            (.tokens, ["codexkit.token.type": .string(kind), "gen_ai.request.model": .string(model ?? "unknown")])
        }

        /// The count this token series records from `usage` (`nil` for the time series and unknown counts).
        func count(in usage: AgentUsage) -> Int? {
            switch self {
            case .timeToFirstChunk, .duration: nil
            case .usageInput, .tokensInput: usage.inputTokens
            case .usageOutput, .tokensOutput: usage.outputTokens
            case .tokensCachedInput: usage.cachedInputTokens
            case .tokensCacheWriteInput: usage.cacheWriteInputTokens
            case .tokensReasoningOutput: usage.reasoningOutputTokens
            }
        }
    }

    /// Handles for the series a successful request of `model` updates, in ``Series`` order: made once per
    /// model and metrics, so a request's end hashes no attribute set.
    private static func series(of metrics: AgentMetrics, model: String?) -> [AgentMetrics.Handle?] {
        metrics.handles(memo: AgentMetrics.MemoKey("chat", model)) { Series.allCases.map { $0.definition(model: model) } }
    }

    private func handle(_ which: Series) -> AgentMetrics.Handle? {
        which.rawValue < series.count ? series[which.rawValue] : nil
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

    /// `text` unless it contains a secret of 8 bytes (UTF-8) or more, compared without regard to case.
    static func safe(_ text: String?, secrets: [String]) -> String? {
        guard let text else { return nil }
        return secrets.contains { $0.utf8.count >= 8 && contains(text, caseInsensitive: $0) } ? nil : text
    }

    /// Whether `text` contains `secret`, compared without regard to case: byte by byte when both are
    /// ASCII (no copies), through `lowercased()` otherwise.
    static func contains(_ text: String, caseInsensitive secret: String) -> Bool {
        let found = text.utf8.withContiguousStorageIfAvailable { text in
            secret.utf8.withContiguousStorageIfAvailable { secret -> Bool? in
                guard text.allSatisfy({ $0 < 0x80 }), secret.allSatisfy({ $0 < 0x80 }) else { return nil }
                guard secret.count <= text.count else { return false }
                func lower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
                for start in 0...(text.count - secret.count) {
                    var index = 0
                    while index < secret.count, lower(text[start + index]) == lower(secret[index]) { index += 1 }
                    if index == secret.count { return true }
                }
                return false
            } ?? nil
        } ?? nil
        if let found { return found }
        return text.lowercased().contains(secret.lowercased())
    }

    /// Notes the first output of the response.
    func noteFirstOutput() {
        guard span.attribute("codexkit.response.time_to_first_token") == nil else { return }
        let seconds = secondsSinceStart()
        span.setAttribute("codexkit.response.time_to_first_token", .double(seconds))
        span.telemetry.metrics.apply(bound: [.record(handle(.timeToFirstChunk), seconds)])
    }

    /// Ends the span for a completed response, with its usage.
    func complete(_ info: ResponsesResponseInfo) {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        span.updateAttributes(status: .ok) { attributes in
            if let id = info.id { attributes["gen_ai.response.id"] = .string(id) }
            if let served = info.model { attributes["gen_ai.response.model"] = .string(served) }
            if let status = info.status {
                attributes["gen_ai.response.finish_reasons"] = status == "completed" ? Self.completedReasons : .strings([status])
            }
            AgentTelemetryAttributes.addUsage(info.usage, to: &attributes)
        }
        var updates: [AgentMetrics.BoundUpdate] = []
        updates.reserveCapacity(Series.allCases.count)
        if let usage = info.usage {
            for series in Series.allCases {
                guard let count = series.count(in: usage) else { continue }
                updates.append(series == .usageInput || series == .usageOutput ? .record(handle(series), Double(count)) : .add(handle(series), count))
            }
        }
        updates.append(.record(handle(.duration), secondsSinceStart()))
        span.telemetry.metrics.apply(bound: updates)
        span.end()
    }

    /// `gen_ai.response.finish_reasons` of a completed response, made once.
    private static let completedReasons = AgentTelemetryValue.strings(["completed"])

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
        var attributes = Self.baseAttributes(model: model)
        attributes["error.type"] = .string(code)
        span.telemetry.metrics.record(.operationDuration, secondsSinceStart(), attributes: attributes)
        span.end()
    }

    private static func baseAttributes(model: String?) -> AgentTelemetryAttributes {
        var attributes: AgentTelemetryAttributes = ["gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai"]
        if let model { attributes["gen_ai.request.model"] = .string(model) }
        return attributes
    }

    private func secondsSinceStart() -> Double {
        let now = AgentTelemetry.unixNano(span.telemetry.wallClock.now())
        return now >= span.startTimeUnixNano ? Double(now - span.startTimeUnixNano) / 1e9 : 0
    }
}
