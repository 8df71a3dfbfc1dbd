import CodexCore
import CodexTransport
import Foundation

extension AgentStructuredRecovery {
    /// Applies the failure table (`Docs/Recovery.md`) to a failed attempt: saves the failure, then either schedules a
    /// replacement (returns, and the loop continues) or throws.
    func handleFailure(_ error: any Error, _ record: inout RecoveryOperationRecord, _ execution: Execution, credentials: AuthCredentials) async throws {
        let id = record.operationID
        if let stop = error as? RecoveryLifecycleStop {
            markLastAttempt(&record, failureCode: "suspended")
            try await self.stop(&record, execution, command: stop.command)
            throw CancellationError()
        }
        if error is CancellationError {
            markLastAttempt(&record, failureCode: "cancelled")
            try await stop(&record, execution, command: try await stopCommand(execution.partition, id) ?? .suspended)
            throw CancellationError()
        }
        guard let failure = error as? AgentRuntimeError else {
            // Lifecycle and policy errors of recovery itself: the record is already consistent.
            throw error
        }
        let summary = AgentRecoveryFailure(failure)
        record.lastFailure = summary
        record.responseID = failure.interruption?.responseID ?? record.responseID
        record.lastSequenceNumber = failure.interruption?.lastSequenceNumber ?? record.lastSequenceNumber
        markLastAttempt(&record, failureCode: summary.code)
        emit("recovery.attempt.failed", record, level: .notice, Self.metadata(summary))

        let status = failure.http?.statusCode
        if failure.interruption?.hadToolActivity == true || failure.executionLimit != nil || failure.code == .quotaExceeded || status == 403 {
            try await fail(&record, execution)
            throw failure
        }
        if status == 401 || failure.code == .unauthorized {
            try record.apply(.interrupt)
            if let renewed = try? await authProvider.recoverAfterUnauthorized(credentials), renewed.binding == record.binding {
                // Renewed: the reissue is the next attempt (and needs budget and authorization).
                record.nextAttemptReason = .authenticationReissue
                try await persist(&record, execution.partition, execution.lease)
                if record.attemptsUsed < record.maximumAttempts { return }
                throw failure
            }
            record.blocker = .authenticationRequired
            try await persist(&record, execution.partition, execution.lease)
            emit("recovery.operation.authentication_required", record, level: .notice, Self.metadata(summary))
            throw failure
        }
        if [.notSignedIn, .refreshFailed, .accountMismatch].contains(failure.code) {
            // The session itself failed: sign-in is needed; the operation is not failed.
            try record.apply(.interrupt)
            record.blocker = .authenticationRequired
            try await persist(&record, execution.partition, execution.lease)
            emit("recovery.operation.authentication_required", record, level: .notice, Self.metadata(summary))
            throw failure
        }
        guard Self.isReplaceable(failure, policy: record.retryPolicy) else {
            try await fail(&record, execution)
            throw failure
        }
        try record.apply(.interrupt)
        guard record.attemptsUsed < record.maximumAttempts else {
            try await persist(&record, execution.partition, execution.lease)
            throw failure
        }
        let replacement = record.attempts.count
        let backoff = max(record.retryPolicy.backoff(beforeReplacement: replacement), min(failure.http?.retryAfter ?? 0, 86_400))
        record.nextAttemptAt = wallClock.now().addingTimeInterval(backoff)
        try await persist(&record, execution.partition, execution.lease)
    }

    private func fail(_ record: inout RecoveryOperationRecord, _ execution: Execution) async throws(AgentRecoveryError) {
        try record.apply(.fail)
        try await persist(&record, execution.partition, execution.lease)
    }

    private func markLastAttempt(_ record: inout RecoveryOperationRecord, failureCode: String) {
        // A completed attempt stays completed (the table refuses `fail` from it).
        guard let last = record.attempts.indices.last, (try? record.attempts[last].apply(.fail, operationID: record.operationID)) != nil else { return }
        record.attempts[last].failureCode = failureCode
        record.attempts[last].responseID = record.responseID
        record.attempts[last].lastSequenceNumber = record.lastSequenceNumber
    }

    /// Whether the saved policy lets `failure` be replaced by a new attempt.
    static func isReplaceable(_ failure: AgentRuntimeError, policy: AgentRecoveryRetryPolicy) -> Bool {
        switch failure.code {
        case .responsesStreamDisconnected, .transportFailure, .timedOut:
            return policy.replacesTransportInterruptions
        case .structuredOutputInvalid, .structuredOutputDecodingFailed, .structuredOutputMissing:
            return policy.retriesInvalidStructuredOutput
        case .responseIncomplete, .structuredOutputTooLarge, .quotaExceeded, .invalidToolResult:
            return false
        default:
            break
        }
        guard let http = failure.http else { return false }
        if http.statusCode == 200 {
            // A `response.failed` or `error` event: only explicitly allowed provider codes.
            return http.providerCode.map(policy.retryableProviderCodes.contains) ?? false
        }
        return policy.retryableStatuses.contains(http.statusCode)
    }
}

extension AgentRecoveryFailure {
    /// The typed, log-safe essentials of a transport, provider or output failure.
    init(_ error: AgentRuntimeError) {
        self.init(
            code: error.code.rawValue, httpStatus: error.http?.statusCode, providerCode: error.http?.providerCode,
            transportDomain: error.interruption?.transportDomain, transportCode: error.interruption?.transportCode,
            hadOutput: error.interruption?.hadOutput ?? false, hadToolActivity: error.interruption?.hadToolActivity ?? false
        )
    }
}
