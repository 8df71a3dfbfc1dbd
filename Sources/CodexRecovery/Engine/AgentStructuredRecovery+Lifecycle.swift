package import CodexCore
import CodexTransport
public import Foundation

/// How a manual retry configures its successor.
public enum AgentRecoverySelection: Sendable, Hashable {
    /// Keep the frozen body and configuration.
    case preserve
    /// Prepare the original request again with this (newly selected) configuration, then freeze it.
    case reselect(AgentRecoveryModelConfiguration)
}

extension AgentStructuredRecovery {
    /// Asks the operation to stop and keep its budget. Works from another runtime or process while a
    /// generation or authorization callback is active (the owner sees the command within
    /// ``Configuration/lifecyclePollInterval``); an idle operation is marked suspended at once.
    /// - Throws: ``AgentRecoveryError`` (`state_unavailable`, storage codes).
    public func suspend(_ handle: AgentStructuredRecoveryHandle, store: AgentStructuredRecoveryStore) async throws {
        try await command(.suspended, handle, store: store)
    }

    /// Cancels the operation permanently: no further generation, no late delivery, no manual retry from
    /// it. The saved request and any saved completion are kept (``abandon(_:store:)`` removes them); the
    /// receipt is refused from now on. An active owner stops within the lifecycle poll interval.
    /// - Throws: ``AgentRecoveryError`` (`state_unavailable`, storage codes).
    public func cancel(_ handle: AgentStructuredRecoveryHandle, store: AgentStructuredRecoveryStore) async throws {
        try await command(.cancelled, handle, store: store)
    }

    private func command(
        _ command: RecoveryControlRecord.Command, _ handle: AgentStructuredRecoveryHandle, store: AgentStructuredRecoveryStore
    ) async throws {
        let id = handle.operationID
        let now = wallClock.now()
        // One pass on the store's queue: the command under the control lock, then, for an idle operation
        // (nobody holds its lease), its record from a fresh read under the lease; an active owner sees
        // the command and updates its record itself.
        let updated = try await store.perform { () throws(AgentRecoveryError) -> RecoveryOperationRecord? in
            guard let partition = try store.locate(id), try partition.load(RecoveryOperationRecord.self, id) != nil else {
                // An acknowledged or abandoned operation is not "missing": its marker says what became of it.
                if let disposition = try store.locate(id)?.load(RecoveryDispositionRecord.self, id) {
                    throw AgentRecoveryError(
                        code: .stateUnavailable, message: "the operation was \(disposition.state == .acknowledged ? "acknowledged" : "abandoned")", operationID: id
                    )
                }
                throw AgentRecoveryError(code: .stateUnavailable, message: "no such operation in this store", operationID: id)
            }
            let written = try partition.withControlLock(id) { () throws(AgentRecoveryError) -> Bool in
                // A permanent cancel is never downgraded to a suspension.
                if command == .suspended, try partition.load(RecoveryControlRecord.self, id)?.command == .cancelled { return false }
                try partition.save(RecoveryControlRecord(operationID: id, runID: UUID(), command: command, updatedAt: now))
                return true
            }
            guard written, let lease = try? partition.lease(id), var record = try partition.load(RecoveryOperationRecord.self, id) else { return nil }
            if command == .cancelled {
                guard record.state != .cancelled else { return nil }
                try record.apply(.cancel)
            } else if record.completedPayload == nil, RecoveryOperationRecord.state(after: .suspend, from: record.state) != nil {
                try record.apply(.suspend)
            } else {
                return nil
            }
            try self.persistOnQueue(&record, partition, lease)
            return record
        }
        guard let updated else { return }
        emit(command == .cancelled ? "recovery.operation.cancelled" : "recovery.operation.suspended", updated)
    }


    /// Records that the host committed the result: writes the disposition marker, then removes the saved
    /// request and response. Call it only after the host's commit succeeded. Repeating it is safe and
    /// completes an interrupted removal.
    /// - Throws: ``AgentRecoveryError`` `state_invalid` (nothing saved to acknowledge), `cancelled`,
    ///   `account_mismatch`, `operation_busy`, `state_unavailable`, storage codes.
    public func acknowledge(_ handle: AgentStructuredRecoveryHandle, store: AgentStructuredRecoveryStore) async throws {
        let id = handle.operationID
        // When the provider knows the account without a network call, the account check and the
        // acknowledgement run in the same step on the store's queue as the record's load; otherwise the
        // record is loaded first and the account checked (which may ask the provider for credentials).
        let knownBinding = await authProvider.currentBinding()
        let now = wallClock.now()
        let opened = try await store.perform { () throws(AgentRecoveryError) -> Opened? in
            let partition = try store.existingPartition(of: id)
            let lease = try partition.lease(id)
            let disposition = try partition.load(RecoveryDispositionRecord.self, id)
            guard let record = try partition.load(RecoveryOperationRecord.self, id) else {
                if disposition?.state == .acknowledged { return nil }
                throw AgentRecoveryError(code: .stateUnavailable, message: "the operation has no saved completion to acknowledge", operationID: id)
            }
            let opened = Opened(partition: partition, lease: lease, disposition: disposition, record: record, finished: knownBinding != nil)
            if let knownBinding {
                try Self.checkAccount(record, binding: knownBinding)
                try Self.finishAcknowledgement(opened, at: now)
            }
            return opened
        }
        guard let opened else { return }
        if !opened.finished {
            try await checkAccount(opened.record)
            let checkedAt = wallClock.now()
            try await store.perform { () throws(AgentRecoveryError) in try Self.finishAcknowledgement(opened, at: checkedAt) }
        }
        emit("recovery.receipt.acknowledged", opened.record)
    }

    /// What `acknowledge` loaded, and whether the acknowledgement is already done.
    private struct Opened: Sendable {
        let partition: RecoveryPartition
        let lease: RecoveryLease
        let disposition: RecoveryDispositionRecord?
        let record: RecoveryOperationRecord
        let finished: Bool
    }

    /// Writes the acknowledgement marker (unless one is there) and removes the record, on the store's
    /// queue, after the account check.
    private static func finishAcknowledgement(_ opened: Opened, at now: Date) throws(AgentRecoveryError) {
        let (partition, lease, record, id) = (opened.partition, opened.lease, opened.record, opened.record.operationID)
        if let disposition = opened.disposition {
            guard disposition.state == .acknowledged else {
                throw AgentRecoveryError(code: .stateUnavailable, message: "the operation was abandoned", operationID: id)
            }
        } else {
            let control = try partition.load(RecoveryControlRecord.self, id)
            guard record.state != .cancelled, control?.command != .cancelled else {
                throw AgentRecoveryError(code: .cancelled, message: "a cancelled operation cannot be acknowledged", operationID: id)
            }
            guard record.state == .completed, record.completedPayload != nil else {
                throw AgentRecoveryError(code: .stateInvalid, message: "only a saved completion can be acknowledged", operationID: id)
            }
            try saveDisposition(.acknowledged, of: record, at: now, partition, lease)
        }
        try lease.verify()
        try partition.remove(RecoveryOperationRecord.self, id)
    }

    /// Writes the disposition marker of `record` (before its record is removed).
    private static func saveDisposition(
        _ state: RecoveryDispositionRecord.State, of record: RecoveryOperationRecord, at now: Date, _ partition: RecoveryPartition, _ lease: RecoveryLease
    ) throws(AgentRecoveryError) {
        try lease.verify()
        try partition.save(RecoveryDispositionRecord(
            operationID: record.operationID, binding: record.binding, scope: record.scope, state: state, disposedAt: now,
            previousOperationID: record.previousOperationID, successorID: record.successor?.operationID
        ))
    }

    /// Abandons the operation: no further generation, content removed, a disposition marker kept. Stop and
    /// await active work first: an operation whose lease is held is refused with `operation_busy`.
    /// - Throws: ``AgentRecoveryError``.
    public func abandon(_ handle: AgentStructuredRecoveryHandle, store: AgentStructuredRecoveryStore) async throws {
        let id = handle.operationID
        let now = wallClock.now()
        let abandoned = try await store.perform { () throws(AgentRecoveryError) -> RecoveryOperationRecord? in
            let partition = try store.existingPartition(of: id)
            let lease = try partition.lease(id)
            let disposition = try partition.load(RecoveryDispositionRecord.self, id)
            guard let record = try partition.load(RecoveryOperationRecord.self, id) else {
                if disposition != nil { return nil }
                throw AgentRecoveryError(code: .stateUnavailable, message: "the operation has no record", operationID: id)
            }
            try partition.save(RecoveryControlRecord(operationID: id, runID: UUID(), command: .cancelled, updatedAt: now))
            if disposition == nil {
                try Self.saveDisposition(.abandoned, of: record, at: now, partition, lease)
            }
            try lease.verify()
            try partition.remove(RecoveryOperationRecord.self, id)
            return record
        }
        if let abandoned { emit("recovery.operation.abandoned", abandoned) }
    }

    /// Creates (or, for the same action and settings, returns) the one linked successor of an exhausted,
    /// terminally failed, expired or configuration-blocked operation, with a fresh budget. It does not
    /// send anything. The successor's ID derives from the source and the action ID, so repeating the
    /// action after a crash completes the same successor.
    /// - Parameters:
    ///   - handle: The source operation.
    ///   - retryActionID: The host's persisted ID of the user's retry decision.
    ///   - store: The store.
    ///   - maximumAttempts: The successor's budget (1…1000).
    ///   - selection: Keep the frozen configuration, or freeze a newly selected one.
    ///   - expiresAt: The successor's expiry.
    ///   - retryPolicy: The successor's policy (default: the source's).
    /// - Returns: The successor's handle (persist it for the same job and revision before sending).
    /// - Throws: ``AgentRecoveryError`` `retry_not_allowed`, `retry_already_created`,
    ///   `retry_configuration_mismatch`, `cancelled`, `state_unavailable`, `account_mismatch`, storage codes.
    public func retry(
        _ handle: AgentStructuredRecoveryHandle, retryActionID: String, store: AgentStructuredRecoveryStore, maximumAttempts: Int,
        selection: AgentRecoverySelection = .preserve, expiresAt: Date? = nil, retryPolicy: AgentRecoveryRetryPolicy? = nil
    ) async throws -> AgentStructuredRecoveryHandle {
        let reselect: Reselection? = if case .reselect(let model) = selection { { _ in model } } else { nil }
        return try await retry(
            handle, retryActionID: retryActionID, store: store, maximumAttempts: maximumAttempts, reselect: reselect, expiresAt: expiresAt,
            retryPolicy: retryPolicy
        )
    }

    /// Chooses a reselecting successor's configuration from the source's saved request: called only when
    /// a new successor is reserved, after the account and the source's eligibility were checked.
    package typealias Reselection = @Sendable (_ source: ReselectionSource) async throws -> AgentRecoveryModelConfiguration

    /// What a reselection starts from.
    package struct ReselectionSource: Sendable {
        /// The request the source was prepared from.
        package let request: Request
        /// Its output format.
        package let format: AgentStructuredOutputFormat
        /// The source's frozen model and instructions (a reselection keeps the instructions); the
        /// reasoning-summary setting is not saved apart from the body and reads `false`.
        package let model: AgentRecoveryModelConfiguration
    }

    /// ``retry(_:retryActionID:store:maximumAttempts:selection:expiresAt:retryPolicy:)`` whose
    /// reselection runs lazily: never for a repeated action (its reservation's configuration is reused)
    /// nor for a source that may not be retried.
    package func retry(
        _ handle: AgentStructuredRecoveryHandle, retryActionID: String, store: AgentStructuredRecoveryStore, maximumAttempts: Int,
        reselect: Reselection?, expiresAt: Date?, retryPolicy: AgentRecoveryRetryPolicy?
    ) async throws -> AgentStructuredRecoveryHandle {
        let id = handle.operationID
        let (partition, lease, loaded) = try await store.perform { () throws(AgentRecoveryError) in
            let partition = try store.existingPartition(of: id)
            let lease = try partition.lease(id)
            guard let source = try partition.load(RecoveryOperationRecord.self, id) else {
                throw AgentRecoveryError(code: .stateUnavailable, message: "an acknowledged, abandoned or missing operation cannot be retried", operationID: id)
            }
            return (partition, lease, source)
        }
        var source = loaded
        try await checkAccount(source)
        let successorID = Self.successorID(of: id, action: retryActionID)
        let reservation: RecoveryOperationRecord.SuccessorReservation
        if let existing = source.successor {
            guard existing.actionID == retryActionID else {
                throw AgentRecoveryError(code: .retryAlreadyCreated, message: "another retry action already created this operation's successor", operationID: id)
            }
            // A repeated action: the same settings, and for a reselection the configuration it froze.
            let repeated = RecoveryOperationRecord.SuccessorReservation(
                operationID: successorID, actionID: retryActionID, maximumAttempts: maximumAttempts,
                reselectedModel: reselect == nil ? nil : existing.reselectedModel, expiresAt: expiresAt,
                retryPolicy: retryPolicy ?? source.retryPolicy
            )
            guard existing == repeated, (reselect != nil) == (existing.reselectedModel != nil) else {
                throw AgentRecoveryError(code: .retryConfigurationMismatch, message: "the retry action was repeated with different settings", operationID: id)
            }
            reservation = existing
        } else {
            let control = try await partition.perform { () throws(AgentRecoveryError) in try partition.load(RecoveryControlRecord.self, id) }
            try checkRetryAllowed(source, control: control)
            try Self.check(AgentRecoveryPreparationOptions(maximumAttempts: maximumAttempts))
            var reselected: AgentRecoveryModelConfiguration?
            if let reselect {
                guard let request = source.originalRequest else {
                    throw AgentRecoveryError(code: .retryNotAllowed, message: "the source has no original request to prepare again", operationID: id)
                }
                let frozen = AgentRecoveryModelConfiguration(
                    model: source.request.model, reasoningEffort: source.request.reasoningEffort.map(ReasoningEffort.init(rawValue:)),
                    enableReasoningSummaries: false, instructions: source.request.instructions
                )
                reselected = try await reselect(ReselectionSource(request: request, format: source.request.format, model: frozen))
            }
            reservation = RecoveryOperationRecord.SuccessorReservation(
                operationID: successorID, actionID: retryActionID, maximumAttempts: maximumAttempts, reselectedModel: reselected,
                expiresAt: expiresAt, retryPolicy: retryPolicy ?? source.retryPolicy
            )
            source.successor = reservation
            try await persist(&source, partition, lease)
        }
        // Create the successor unless a previous run already did (a crash or failure may have come
        // between the reservation and the successor's record).
        let existingSuccessor = try await store.perform { () throws(AgentRecoveryError) in
            try store.locate(successorID)?.load(RecoveryOperationRecord.self, successorID)
        }
        if existingSuccessor == nil {
            try await createSuccessor(of: source, id: successorID, reservation: reservation, store: store)
        }
        emit("recovery.operation.manual_retry_created", source, ["successor_id": successorID.uuidString.lowercased()])
        return AgentStructuredRecoveryHandle(operationID: successorID)
    }

    private func checkRetryAllowed(_ source: RecoveryOperationRecord, control: RecoveryControlRecord?) throws {
        let id = source.operationID
        if source.state == .cancelled || control?.command == .cancelled {
            throw AgentRecoveryError(code: .cancelled, message: "a permanently cancelled operation cannot be retried", operationID: id)
        }
        guard source.completedPayload == nil else {
            throw AgentRecoveryError(code: .retryNotAllowed, message: "the operation has a saved completion: read its receipt instead", operationID: id)
        }
        let exhausted = source.attemptsUsed >= source.maximumAttempts
        let expired = source.expiresAt.map { wallClock.now() >= $0 } ?? false
        let allowed = exhausted || expired || source.state == .failed || source.blocker == .configurationUnavailable
        guard allowed else {
            throw AgentRecoveryError(
                code: .retryNotAllowed,
                message: "the operation can still run (\(source.maximumAttempts - source.attemptsUsed) attempt(s) left): resume it instead",
                operationID: id
            )
        }
    }

    private func createSuccessor(
        of source: RecoveryOperationRecord, id: UUID, reservation: RecoveryOperationRecord.SuccessorReservation,
        store: AgentStructuredRecoveryStore
    ) async throws {
        let model = reservation.reselectedModel
        let retryPolicy = reservation.retryPolicy
        let lineage = Lineage(
            previousOperationID: source.operationID, rootOperationID: source.rootOperationID ?? source.operationID, retryActionID: reservation.actionID
        )
        let options = AgentRecoveryPreparationOptions(
            maximumAttempts: reservation.maximumAttempts, expiresAt: reservation.expiresAt, retryPolicy: retryPolicy,
            scope: source.scope, hostJobID: source.hostJobID, inputRevision: source.inputRevision, contractVersion: source.contractVersion
        )
        if let model, let request = source.originalRequest {
            _ = try await prepare(
                request, format: source.request.format, model: model, store: store, options: options, requiredTools: [],
                operationID: id, lineage: lineage
            )
            return
        }
        guard model == nil else {
            throw AgentRecoveryError(code: .retryNotAllowed, message: "the source has no original request to prepare again", operationID: source.operationID)
        }
        let (partition, lease) = try await store.perform { () throws(AgentRecoveryError) in
            guard let partition = try store.partition(binding: source.binding, scope: source.scope, create: true) else {
                throw AgentRecoveryError(code: .storageFailure, message: "cannot create the operation's directory", operationID: id)
            }
            return (partition, try partition.lease(id))
        }
        let now = wallClock.now()
        var successor = source
        successor.operationID = id
        successor.maximumAttempts = reservation.maximumAttempts
        successor.expiresAt = reservation.expiresAt
        successor.retryPolicy = retryPolicy
        successor.state = .prepared // a new operation: created prepared, not moved there by a transition
        successor.attemptsUsed = 0
        successor.attempts = []
        successor.pendingAttemptID = UUID() // saved with the record, before any host authorization
        successor.nextAttemptAt = nil
        successor.nextAttemptReason = nil
        successor.responseID = nil
        successor.lastSequenceNumber = nil
        successor.lastFailure = nil
        successor.blocker = nil
        successor.completedPayload = nil
        successor.completedAt = nil
        successor.createdAt = now
        successor.previousOperationID = lineage.previousOperationID
        successor.rootOperationID = lineage.rootOperationID
        successor.retryActionID = lineage.retryActionID
        successor.successor = nil
        try await persist(&successor, partition, lease)
        emit("recovery.operation.prepared", successor)
    }

    /// The successor ID of `source` for `action`: the first 16 bytes of SHA-256 of "<source>:<action>",
    /// shaped as a version-4 UUID.
    static func successorID(of source: UUID, action: String) -> UUID {
        var bytes = Array(SHA256.hash(Array("\(source.uuidString.lowercased()):\(action)".utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
