public import CodexCore
import CodexSchema
import CodexTransport
public import Foundation

extension AgentStructuredRecovery {
    /// Sends (or reopens) an operation and returns its validated, decoded result.
    ///
    /// A saved completion is returned at once: no POST, no callback. Otherwise, per attempt: a pending
    /// attempt ID is saved, `authorizeAttempt` is asked (a replay of the same ID is not a new charge; a
    /// denial spends nothing; a `CancellationError` suspends), lifecycle, account, expiry and budget are
    /// rechecked, the consumed attempt is saved, and only then is the frozen body sent, with the attempt
    /// ID as `x-client-request-id`. Eligible failures are replaced within the budget after the saved
    /// backoff; the result is validated, decoded and saved before it is returned.
    ///
    /// Cancelling the calling task suspends the operation (its budget and any saved completion stay) and
    /// throws `CancellationError`; so does a `suspend` or `cancel` from another execution.
    /// - Parameters:
    ///   - handle: The operation.
    ///   - response: The type to decode.
    ///   - format: The output contract; it must equal the saved one.
    ///   - store: The store holding the operation.
    ///   - decoder: Decodes the validated payload.
    ///   - expectedContractVersion: When given, must equal the saved contract version.
    ///   - authorizeAttempt: Asked before every generation POST; must be idempotent per attempt ID.
    /// - Returns: The decoded result.
    /// - Throws: ``AgentRecoveryError`` (lifecycle, policy and storage codes),
    ///   ``CodexCore/AgentRuntimeError`` (the last transport, provider or output failure), or
    ///   `CancellationError`.
    public func sendRecovering<Output: Decodable>(
        _ handle: AgentStructuredRecoveryHandle, response: Output.Type, format: AgentStructuredOutputFormat,
        store: AgentStructuredRecoveryStore, decoder: JSONDecoder = JSONDecoder(), expectedContractVersion: String? = nil,
        authorizeAttempt: @escaping @Sendable (AgentRecoveryAttempt) async throws -> Bool
    ) async throws -> Output {
        let id = handle.operationID
        // When the provider knows the account without a network call, the account and contract checks
        // and the read of the command record run in the same step on the store's queue as the record's
        // load; for a record that can start a run, that read is under the control lock and stands for
        // the start's own. Otherwise the record is loaded first, the account checked (which may ask the
        // provider for credentials), and the command read afterwards.
        let knownBinding = await authProvider.currentBinding()
        @Sendable func checkContract(_ record: RecoveryOperationRecord) throws(AgentRecoveryError) {
            guard record.request.format == format, expectedContractVersion == nil || expectedContractVersion == record.contractVersion else {
                throw AgentRecoveryError(code: .formatMismatch, message: "the requested output contract differs from the saved one", operationID: id)
            }
        }
        let first = try await store.perform { () throws(AgentRecoveryError) -> FirstStep in
            let partition = try store.existingPartition(of: id)
            let lease = try partition.lease(id)
            let disposition = try partition.load(RecoveryDispositionRecord.self, id)
            guard let record = try partition.load(RecoveryOperationRecord.self, id), disposition == nil else {
                throw AgentRecoveryError(
                    code: .stateUnavailable,
                    message: disposition.map { "the operation was \($0.state.rawValue)" } ?? "the operation has no record",
                    operationID: id
                )
            }
            guard let knownBinding else { return FirstStep(partition: partition, lease: lease, record: record, command: nil, read: .none) }
            try Self.checkAccount(record, binding: knownBinding)
            try checkContract(record)
            // A saved completion or a terminal failure starts no run: its command is read as a receipt
            // reads it, without creating or taking the control lock.
            guard record.completedPayload == nil, record.state != .failed, record.state != .cancelled else {
                let command = try partition.load(RecoveryControlRecord.self, id)?.command
                return FirstStep(partition: partition, lease: lease, record: record, command: command, read: .unlocked)
            }
            let command = try partition.withControlLock(id) { () throws(AgentRecoveryError) in
                try partition.load(RecoveryControlRecord.self, id)?.command
            }
            return FirstStep(partition: partition, lease: lease, record: record, command: command, read: .locked)
        }
        let (partition, lease) = (first.partition, first.lease)
        var record = first.record
        var command = first.command
        if first.read == .none {
            try await checkAccount(record)
            try checkContract(record)
            command = try await partition.perform { () throws(AgentRecoveryError) in try partition.load(RecoveryControlRecord.self, id) }?.command
        }
        if record.state == .cancelled || command == .cancelled {
            throw AgentRecoveryError(code: .cancelled, message: "the operation was permanently cancelled", operationID: id)
        }
        if let payload = record.completedPayload {
            let output = try decodeValidated(Array(payload.utf8), as: Output.self, format: format, decoder: decoder)
            emit("recovery.receipt.retrieved", record)
            return output
        }
        guard record.state != .failed else {
            throw AgentRecoveryError(code: .permanentlyFailed, message: "the operation failed terminally (\(record.lastFailure?.code ?? "unknown"))", operationID: id)
        }
        guard record.request.endpoint == configuration.endpoint.baseURL.absoluteString else {
            record.blocker = .configurationUnavailable
            try await persist(&record, partition, lease)
            throw AgentRecoveryError(code: .stateInvalid, message: "the operation was prepared for another endpoint; it is blocked", operationID: id)
        }
        // Start under the control lock, so a concurrent `cancel` is either seen here or comes after (and
        // this run's checks see it). A suspension an earlier run obeyed is cleared for this one; with no
        // command (the usual case) there is nothing to write: no record and `active` mean the same. A
        // command the first step read under the lock needs no second look unless it asks for that write.
        if first.read != .locked || (command != nil && command != .active) {
            let now = wallClock.now()
            try await partition.perform { () throws(AgentRecoveryError) in
                try partition.withControlLock(id) { () throws(AgentRecoveryError) in
                    let command = try partition.load(RecoveryControlRecord.self, id)?.command
                    if command == .cancelled {
                        throw AgentRecoveryError(code: .cancelled, message: "the operation was permanently cancelled", operationID: id)
                    }
                    if let command, command != .active {
                        try partition.save(RecoveryControlRecord(operationID: id, runID: UUID(), command: .active, updatedAt: now))
                    }
                }
            }
        }
        // The first reservation need not read the command record again when it was just read under the
        // control lock and nothing happened since but checks on the loaded record: no host callback, no
        // network, no write (a reopened record's write below makes it read again).
        var commandJustRead = true
        if record.state == .suspended || record.state == .running || record.blocker != nil {
            if record.state == .suspended || record.state == .running { try record.apply(.reopen) }
            record.blocker = nil
            try await persist(&record, partition, lease)
            commandJustRead = false
        }

        let execution = Execution(partition: partition, lease: lease, authorize: authorizeAttempt)
        while true {
            let credentials = try await reserveAttempt(&record, execution, commandJustRead: commandJustRead)
            commandJustRead = false
            // The attempt's span, under the caller's (the runtime's `codexkit.recovery` span): the
            // model request's `chat` span nests inside it.
            let span = AgentSpan.current?.child("codexkit.recovery.attempt", attributes: [
                "codexkit.recovery.operation_id": .string(record.operationID.uuidString.lowercased()), "codexkit.recovery.attempt": .int(Int64(record.attempts.count)),
            ])
            do {
                let payload = try await AgentSpan.$current.withValue(span ?? AgentSpan.current) {
                    try await transmit(&record, execution, credentials: credentials)
                }
                let output = try decodeValidated(payload, as: Output.self, format: format, decoder: decoder)
                try await deliverCompletion(&record, payload, execution)
                span?.setStatus(.ok)
                span?.end()
                return output
            } catch let error as AgentRecoveryError where error.isStorageFailure {
                span?.recordFailure(code: error.code.rawValue)
                span?.end()
                throw error
            } catch {
                span?.recordFailure(code: (error as? AgentRecoveryError)?.code.rawValue ?? (error as? AgentRuntimeError)?.code.rawValue ?? "failed")
                span?.end()
                try await handleFailure(error, &record, execution, credentials: credentials)
            }
        }
    }

    /// `sendRecovering` for a type that carries its own contract (``CodexCore/AgentStructuredOutput``).
    public func sendRecovering<Output: AgentStructuredOutput>(
        _ handle: AgentStructuredRecoveryHandle, response: Output.Type, store: AgentStructuredRecoveryStore,
        decoder: JSONDecoder = JSONDecoder(), expectedContractVersion: String? = nil,
        authorizeAttempt: @escaping @Sendable (AgentRecoveryAttempt) async throws -> Bool
    ) async throws -> Output {
        try await sendRecovering(
            handle, response: response, format: Output.responseFormat, store: store, decoder: decoder,
            expectedContractVersion: expectedContractVersion, authorizeAttempt: authorizeAttempt
        )
    }

    /// How the write that spends an attempt ended.
    enum Reservation: Sendable {
        /// A lifecycle command says stop; nothing was written.
        case stopped(RecoveryControlRecord.Command)
        /// The credentials belong to another account; nothing was written.
        case accountChanged
        /// The attempt is spent and authorized: the record as saved.
        case saved(RecoveryOperationRecord)
    }

    /// What `sendRecovering`'s first step on the store's queue loaded, and how it read the command.
    struct FirstStep: Sendable {
        /// How the lifecycle command was read in the first step.
        enum CommandRead: Sendable {
            /// Not read (and the account not checked): the provider could not name its account.
            case none
            /// Read without the control lock (a record that starts no run).
            case unlocked
            /// Read under the control lock.
            case locked
        }

        let partition: RecoveryPartition
        let lease: RecoveryLease
        let record: RecoveryOperationRecord
        let command: RecoveryControlRecord.Command?
        let read: CommandRead
    }

    /// What one execution holds: the partition, the lease and the host's callback.
    struct Execution: Sendable {
        let partition: RecoveryPartition
        let lease: RecoveryLease
        let authorize: @Sendable (AgentRecoveryAttempt) async throws -> Bool
    }

    // MARK: - Steps

    /// Saves `record` after re-checking the lease's lock file, on the store's queue; `record` takes the
    /// saved `updatedAt` only when the save succeeded.
    func persist(_ record: inout RecoveryOperationRecord, _ partition: RecoveryPartition, _ lease: RecoveryLease) async throws(AgentRecoveryError) {
        let unsaved = record
        record = try await partition.perform { () throws(AgentRecoveryError) in
            var saved = unsaved
            try self.persistOnQueue(&saved, partition, lease)
            return saved
        }
    }

    /// ``persist(_:_:_:)`` for a body already running on the store's queue (under a lock).
    func persistOnQueue(_ record: inout RecoveryOperationRecord, _ partition: RecoveryPartition, _ lease: RecoveryLease) throws(AgentRecoveryError) {
        try lease.verify()
        record.updatedAt = wallClock.now()
        try partition.save(record)
    }

    /// Fails with `account_mismatch` unless the current credentials have the record's binding.
    func checkAccount(_ record: RecoveryOperationRecord) async throws {
        let binding: String
        if let known = await authProvider.currentBinding() {
            binding = known
        } else {
            binding = try await authProvider.credentials().binding
        }
        try Self.checkAccount(record, binding: binding)
    }

    /// Fails with `account_mismatch` unless `binding` is the record's.
    static func checkAccount(_ record: RecoveryOperationRecord, binding: String) throws(AgentRecoveryError) {
        guard binding == record.binding else {
            throw AgentRecoveryError(code: .accountMismatch, message: "the operation belongs to another account", operationID: record.operationID)
        }
    }

    /// The pending lifecycle command, if it asks the owner to stop (read on the store's queue).
    func stopCommand(_ partition: RecoveryPartition, _ id: UUID) async throws(AgentRecoveryError) -> RecoveryControlRecord.Command? {
        try await partition.perform { () throws(AgentRecoveryError) in try Self.pendingStopCommand(partition, id) }
    }

    /// ``stopCommand(_:_:)`` for a body already running on the store's queue.
    static func pendingStopCommand(_ partition: RecoveryPartition, _ id: UUID) throws(AgentRecoveryError) -> RecoveryControlRecord.Command? {
        guard let control = try partition.load(RecoveryControlRecord.self, id), control.command != .active else { return nil }
        return control.command
    }

    /// Checks lifecycle, expiry and budget, waits out the cooldown, asks the host, rechecks, and saves
    /// the consumed attempt. Returns the credentials to transmit with. `commandJustRead` says the caller
    /// read the command record on the store's queue and awaited nothing but the store since, so the
    /// first check need not read it again.
    private func reserveAttempt(
        _ record: inout RecoveryOperationRecord, _ execution: Execution, commandJustRead: Bool
    ) async throws -> AuthCredentials {
        let id = record.operationID
        if commandJustRead {
            try await stopIfCancelled(&record, execution)
        } else {
            try await stopIfCommanded(&record, execution)
        }
        try checkExpiryAndBudget(record)
        if let next = record.nextAttemptAt {
            let delay = min(next.timeIntervalSince(wallClock.now()), configuration.maximumCooldown)
            if delay > 0 {
                emit("recovery.operation.waiting", record, ["delay_ms": String(Int(delay * 1000))])
                try await sleepWatchingLifecycle(delay, &record, execution)
            }
        }
        // The attempt's ID is on disk before the host hears of it. It was chosen and saved with the
        // record's previous write (prepare, or the previous attempt's reservation); a record from an
        // earlier version of the store may lack one, and gets it in a write of its own.
        if record.pendingAttemptID == nil {
            record.pendingAttemptID = UUID()
            try await persist(&record, execution.partition, execution.lease)
        }
        let attemptID = record.pendingAttemptID ?? UUID()
        let reason: AgentRecoveryAttempt.Reason = record.nextAttemptReason ?? (record.attemptsUsed == 0 ? .initial : .replacement)
        let attempt = AgentRecoveryAttempt(
            operationID: id, id: attemptID, number: record.attemptsUsed + 1, maximumAttempts: record.maximumAttempts, reason: reason,
            previousFailure: record.lastFailure, previousResponseID: record.responseID, previousSequenceNumber: record.lastSequenceNumber
        )
        let authorized: Bool
        do {
            authorized = try await execution.authorize(attempt)
        } catch is CancellationError {
            try await stop(&record, execution, command: try await stopCommand(execution.partition, id) ?? .suspended)
            throw CancellationError()
        } catch {
            try record.apply(.interrupt)
            try await persist(&record, execution.partition, execution.lease)
            throw error
        }
        guard authorized else {
            throw AgentRecoveryError(code: .attemptNotAuthorized, message: "the host did not authorize attempt \(attempt.number)", operationID: id)
        }
        // The answer may be late: recheck everything it could have raced with.
        try await stopIfCommanded(&record, execution)
        try checkExpiryAndBudget(record)
        let credentials: AuthCredentials
        do {
            credentials = try await authProvider.credentials()
        } catch is CancellationError {
            try await stop(&record, execution, command: .suspended)
            throw CancellationError()
        } catch {
            record.blocker = .authenticationRequired
            try record.apply(.interrupt)
            try await persist(&record, execution.partition, execution.lease)
            throw error
        }
        // A lifecycle command that came in while the credentials were fetched is seen by the write below,
        // under the control lock, before the account is compared and before anything is spent; only the
        // task's own cancellation is checked here.
        try await stopIfCancelled(&record, execution)
        // Consume the attempt and authorize its transmission in one write, under the control lock: a
        // stop command is either seen here (nothing spent) or comes after (and the monitor sees it).
        var consumed = record
        consumed.attemptsUsed += 1
        var reserved = RecoveryOperationRecord.Attempt(
            id: attemptID, number: consumed.attemptsUsed, reason: reason.rawValue, reservedAt: wallClock.now(), state: .reserved
        )
        try reserved.apply(.authorize, operationID: id)
        consumed.attempts.append(reserved)
        // The next attempt's ID travels with this write, so asking the host about a replacement needs no
        // write of its own.
        consumed.pendingAttemptID = UUID()
        consumed.nextAttemptReason = nil
        consumed.nextAttemptAt = nil
        consumed.responseID = nil
        consumed.lastSequenceNumber = nil
        try consumed.apply(.startAttempt)
        let toSave = consumed
        let accountMatches = credentials.binding == record.binding
        let reservation = try await execution.partition.perform { () throws(AgentRecoveryError) -> Reservation in
            try execution.partition.withControlLock(id) { () throws(AgentRecoveryError) in
                if let command = try Self.pendingStopCommand(execution.partition, id) { return .stopped(command) }
                guard accountMatches else { return .accountChanged }
                var saved = toSave
                try self.persistOnQueue(&saved, execution.partition, execution.lease)
                return .saved(saved)
            }
        }
        switch reservation {
        case .stopped(let command):
            try await stop(&record, execution, command: command)
            throw CancellationError()
        case .accountChanged:
            record.blocker = .accountMismatch
            try record.apply(.interrupt)
            try await persist(&record, execution.partition, execution.lease)
            throw AgentRecoveryError(code: .accountMismatch, message: "the account changed before transmission", operationID: id)
        case .saved(let saved):
            record = saved
        }
        let attemptMetadata = ["attempt_id": attemptID.uuidString.lowercased(), "attempt_reason": reason.rawValue]
        emit("recovery.attempt.reserved", record, attemptMetadata)
        emit("recovery.attempt.transmission_authorized", record, attemptMetadata)
        return credentials
    }

    private func checkExpiryAndBudget(_ record: RecoveryOperationRecord) throws(AgentRecoveryError) {
        if let expiresAt = record.expiresAt, wallClock.now() >= expiresAt {
            throw AgentRecoveryError(code: .stateExpired, message: "permission to start a new attempt has expired", operationID: record.operationID)
        }
        guard record.attemptsUsed < record.maximumAttempts else {
            throw AgentRecoveryError(
                code: .attemptsExhausted, message: "all \(record.maximumAttempts) attempts are spent", operationID: record.operationID
            )
        }
    }

    /// Stops when a lifecycle command says so (state saved, `CancellationError` thrown).
    private func stopIfCommanded(_ record: inout RecoveryOperationRecord, _ execution: Execution) async throws {
        if let command = try await stopCommand(execution.partition, record.operationID) {
            try await stop(&record, execution, command: command)
            throw CancellationError()
        }
        try await stopIfCancelled(&record, execution)
    }

    /// Stops when the calling task was cancelled: as a pending lifecycle command says, else suspended
    /// (state saved, `CancellationError` thrown).
    private func stopIfCancelled(_ record: inout RecoveryOperationRecord, _ execution: Execution) async throws {
        if Task.isCancelled {
            // A command that came in meanwhile decides how it stops, as when the command is checked first.
            try await stop(&record, execution, command: try await stopCommand(execution.partition, record.operationID) ?? .suspended)
            throw CancellationError()
        }
    }

    /// Saves the stopped state: `cancelled` (content kept, delivery fenced) or `suspended` (budget and
    /// completion kept).
    func stop(_ record: inout RecoveryOperationRecord, _ execution: Execution, command: RecoveryControlRecord.Command) async throws {
        if command == .cancelled {
            try record.apply(.cancel)
            try await persist(&record, execution.partition, execution.lease)
            emit("recovery.operation.cancelled", record)
        } else if record.completedPayload == nil {
            try record.apply(.suspend)
            try await persist(&record, execution.partition, execution.lease)
            emit("recovery.operation.suspended", record)
        }
    }

    /// Sleeps `seconds` in slices, stopping early for a lifecycle command or task cancellation.
    private func sleepWatchingLifecycle(_ seconds: TimeInterval, _ record: inout RecoveryOperationRecord, _ execution: Execution) async throws {
        var remaining = Duration.milliseconds(Int64((seconds * 1000).rounded(.up)))
        while remaining > .zero {
            let slice = min(remaining, configuration.lifecyclePollInterval)
            do {
                try await clock.sleep(for: slice)
            } catch {
                try await stop(&record, execution, command: try await stopCommand(execution.partition, record.operationID) ?? .suspended)
                throw CancellationError()
            }
            remaining -= slice
            try await stopIfCommanded(&record, execution)
        }
    }
}
