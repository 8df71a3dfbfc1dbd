import CodexCore
import Foundation

extension AgentStructuredRecovery {
    /// The `event_version` of `recovery.*` events.
    static let telemetryEventVersion = "1"

    /// Records a `recovery.*` event: operational IDs, counts, the model configuration and safe typed
    /// codes only — never prompt or output text, tokens, account bindings, scopes, host job strings or
    /// provider messages.
    func emit(_ name: String, _ record: RecoveryOperationRecord, level: AgentLogLevel = .info, _ extra: [String: String] = [:]) {
        var metadata: [String: String] = [
            "event_version": Self.telemetryEventVersion,
            "operation_id": record.operationID.uuidString.lowercased(),
            "root_operation_id": (record.rootOperationID ?? record.operationID).uuidString.lowercased(),
            "attempts_used": String(record.attemptsUsed),
            "maximum_attempts": String(record.maximumAttempts),
            "has_saved_completion": record.completedPayload == nil ? "false" : "true",
            "model": record.request.model,
        ]
        if let effort = record.request.reasoningEffort { metadata["reasoning_effort"] = effort }
        if let previous = record.previousOperationID { metadata["previous_operation_id"] = previous.uuidString.lowercased() }
        metadata.merge(extra) { _, new in new }
        logSink.record(AgentLogEvent(level: level, category: .recovery, name: name, metadata: metadata))
    }

    /// The safe metadata of a failure summary.
    static func metadata(_ failure: AgentRecoveryFailure?) -> [String: String] {
        guard let failure else { return [:] }
        var metadata = ["error_code": failure.code]
        if let status = failure.httpStatus { metadata["http_status"] = String(status) }
        if let code = failure.providerCode { metadata["provider_code"] = code }
        if let domain = failure.transportDomain { metadata["transport_domain"] = domain }
        if let code = failure.transportCode { metadata["transport_code"] = String(code) }
        return metadata
    }
}
