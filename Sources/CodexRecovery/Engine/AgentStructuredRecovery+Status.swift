import CodexCore
import CodexTransport
import Foundation

extension AgentStructuredRecovery {
    /// The operation's status. Takes no lease, sends nothing, renews no credentials (it asks the auth
    /// provider only for the current binding). Account-mismatched or signed-out status is redacted.
    /// - Throws: ``AgentRecoveryError`` `state_unavailable` when there is no trace of the operation, or a
    ///   storage code when its record cannot be read (never treated as absent).
    public func status(_ handle: AgentStructuredRecoveryHandle, store: AgentStructuredRecoveryStore) async throws -> AgentStructuredRecoveryStatus {
        let id = handle.operationID
        // The disposition marker wins: an acknowledgement interrupted before removing the record is
        // still an acknowledgement.
        let (marker, loaded, control, leaseHeld) = try await store.perform {
            () throws(AgentRecoveryError) -> (RecoveryDispositionRecord?, RecoveryOperationRecord?, RecoveryControlRecord?, Bool) in
            let partition = try store.existingPartition(of: id)
            let marker = try partition.load(RecoveryDispositionRecord.self, id)
            guard let record = try partition.load(RecoveryOperationRecord.self, id), marker == nil else { return (marker, nil, nil, false) }
            return (nil, record, try partition.load(RecoveryControlRecord.self, id), try partition.isLeaseHeld(id))
        }
        guard let record = loaded, marker == nil else {
            guard let disposition = marker else {
                throw AgentRecoveryError(code: .stateUnavailable, message: "the operation has no record", operationID: id)
            }
            let acknowledged = disposition.state == .acknowledged
            return AgentStructuredRecoveryStatus(
                operationID: id, state: acknowledged ? .acknowledged : .abandoned, availability: acknowledged ? .acknowledged : .abandoned,
                blockers: [], hasSavedCompletion: false, attemptsUsed: 0, maximumAttempts: 0, nextAttemptAt: nil, expiresAt: nil,
                rootOperationID: nil, previousOperationID: disposition.previousOperationID, successorOperationID: disposition.successorID,
                attempts: [], responseID: nil, lastSequenceNumber: nil, lastFailure: nil, suggestedActions: [], isRedacted: false
            )
        }
        var state = AgentStructuredRecoveryStatus.State(rawValue: record.state.rawValue) ?? .interrupted
        if state == .running, !leaseHeld { state = .interrupted }
        if control?.command == .cancelled { state = .cancelled }

        let currentBinding = await authProvider.currentBinding()
        let redacted = currentBinding != record.binding
        var blockers: [AgentRecoveryBlocker]
        if currentBinding == nil {
            blockers = [.authenticationRequired]
        } else if redacted {
            blockers = [.accountMismatch]
        } else {
            // A saved account mismatch no longer applies once the original account is back.
            blockers = record.blocker.map { [$0] }?.filter { $0 != .accountMismatch } ?? []
        }
        let now = wallClock.now()
        let expired = record.expiresAt.map { now >= $0 } ?? false
        let exhausted = record.attemptsUsed >= record.maximumAttempts
        let hasCompletion = record.completedPayload != nil
        let availability: AgentStructuredRecoveryStatus.Availability
        switch true {
        case blockers.contains(.authenticationRequired): availability = .authenticationRequired
        case state == .cancelled: availability = .permanentlyCancelled
        case state == .suspended || control?.command == .suspended: availability = .suspended
        case hasCompletion: availability = .completionSaved
        case expired: availability = .expired
        case !blockers.isEmpty: availability = .blocked
        case exhausted: availability = .exhausted
        case state == .failed: availability = .failed
        case record.nextAttemptAt.map({ $0 > now }) ?? false: availability = .waiting
        case leaseHeld: availability = .running
        case record.attemptsUsed == 0: availability = .ready
        default: availability = .replacementEligible
        }
        let actions: [AgentStructuredRecoveryStatus.SuggestedAction] = switch availability {
        case .authenticationRequired: [.signIn, .abandon]
        case .permanentlyCancelled: [.abandon]
        case .suspended: hasCompletion ? [.readReceipt, .acknowledge] : (exhausted ? [.manualRetry, .abandon] : [.resume, .abandon])
        case .completionSaved: [.readReceipt, .acknowledge]
        case .expired, .exhausted, .failed: [.manualRetry, .abandon]
        case .blocked: redacted ? [.signIn] : [.manualRetry, .abandon]
        case .waiting: [.wait, .resume]
        case .running: [.wait]
        case .ready: [.execute]
        case .replacementEligible: [.resume, .abandon]
        case .acknowledged, .abandoned: []
        }
        return AgentStructuredRecoveryStatus(
            operationID: id, state: state, availability: availability, blockers: blockers, hasSavedCompletion: hasCompletion,
            attemptsUsed: record.attemptsUsed, maximumAttempts: record.maximumAttempts, nextAttemptAt: record.nextAttemptAt,
            expiresAt: record.expiresAt, rootOperationID: redacted ? nil : record.rootOperationID,
            previousOperationID: redacted ? nil : record.previousOperationID,
            successorOperationID: redacted ? nil : record.successor?.operationID,
            attempts: redacted ? [] : record.attempts.map {
                .init(id: $0.id, number: $0.number, reason: .init(rawValue: $0.reason), reservedAt: $0.reservedAt, state: $0.state.rawValue,
                      responseID: $0.responseID, lastSequenceNumber: $0.lastSequenceNumber, failureCode: $0.failureCode)
            },
            responseID: redacted ? nil : record.responseID, lastSequenceNumber: redacted ? nil : record.lastSequenceNumber,
            lastFailure: redacted ? nil : record.lastFailure, suggestedActions: actions, isRedacted: redacted
        )
    }

    /// The saved completion with its original contract and binding. Works without a live backend or
    /// unexpired generation permission; still refuses another account and a cancelled operation.
    /// - Throws: ``AgentRecoveryError`` `completion_unavailable`, `cancelled`, `account_mismatch`,
    ///   `state_unavailable`, storage codes.
    public func receipt(_ handle: AgentStructuredRecoveryHandle, store: AgentStructuredRecoveryStore) async throws -> AgentStructuredRecoveryReceipt {
        let id = handle.operationID
        let (partition, record) = try await store.perform { () throws(AgentRecoveryError) in
            guard let partition = try store.locate(id), let record = try partition.load(RecoveryOperationRecord.self, id),
                  try partition.load(RecoveryDispositionRecord.self, id) == nil
            else {
                throw AgentRecoveryError(code: .stateUnavailable, message: "the operation has no record, or was acknowledged or abandoned", operationID: id)
            }
            return (partition, record)
        }
        try await checkAccount(record)
        let control = try await partition.perform { () throws(AgentRecoveryError) in try partition.load(RecoveryControlRecord.self, id) }
        guard record.state != .cancelled, control?.command != .cancelled else {
            throw AgentRecoveryError(code: .cancelled, message: "the operation was permanently cancelled", operationID: id)
        }
        guard let payload = record.completedPayload else {
            throw AgentRecoveryError(code: .completionUnavailable, message: "no completion is saved", operationID: id)
        }
        emit("recovery.receipt.retrieved", record)
        return AgentStructuredRecoveryReceipt(
            operationID: id, payload: Array(payload.utf8), format: record.request.format, contractVersion: record.contractVersion,
            binding: record.binding, hostJobID: record.hostJobID, inputRevision: record.inputRevision,
            rootOperationID: record.rootOperationID, previousOperationID: record.previousOperationID, completedAt: record.completedAt
        )
    }
}
