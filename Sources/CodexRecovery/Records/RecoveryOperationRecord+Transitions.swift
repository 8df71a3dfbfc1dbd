import Foundation

extension RecoveryOperationRecord {
    /// What moves an operation from one saved state to the next. Every change of a record's `state` goes
    /// through ``state(after:from:)``: sending, transmission, failure handling and the lifecycle
    /// commands all use it, so the whole lifecycle is this one table.
    enum Transition: String, CaseIterable, Sendable {
        /// A new owner takes over a run that stopped (`running` after a crash, `suspended`): interrupted.
        case reopen
        /// An attempt is consumed and authorized for transmission: running.
        case startAttempt
        /// The run stops short of a result but may continue (a replaceable failure, sign-in needed, the
        /// host's refusal or failure, an account change): interrupted.
        case interrupt
        /// A terminal failure of the running attempt: failed.
        case fail
        /// The validated completion is saved: completed.
        case complete
        /// A suspension (the host's command or its task's cancellation) of a run without a result.
        case suspend
        /// A permanent cancellation; allowed from every state (a saved payload is kept, never delivered).
        case cancel
    }

    /// The state `transition` leads to from `state`, or nil when the lifecycle does not allow it.
    static func state(after transition: Transition, from state: State) -> State? {
        switch (transition, state) {
        case (.reopen, .running), (.reopen, .suspended): .interrupted
        case (.startAttempt, .prepared), (.startAttempt, .interrupted): .running
        case (.interrupt, .prepared), (.interrupt, .running), (.interrupt, .interrupted): .interrupted
        case (.fail, .running): .failed
        case (.complete, .running): .completed
        case (.suspend, .prepared), (.suspend, .running), (.suspend, .interrupted): .suspended
        case (.cancel, _): .cancelled
        default: nil
        }
    }

    /// Applies `transition`.
    /// - Throws: ``AgentRecoveryError`` `state_invalid` when the lifecycle does not allow it (the record
    ///   is left as it was).
    mutating func apply(_ transition: Transition) throws(AgentRecoveryError) {
        guard let next = Self.state(after: transition, from: state) else {
            throw AgentRecoveryError(
                code: .stateInvalid, message: "an operation that is \(state.rawValue) cannot \(transition.rawValue)", operationID: operationID
            )
        }
        state = next
    }
}

extension RecoveryOperationRecord.Attempt {
    /// What moves an attempt from one saved state to the next. Every change of an attempt's `state`
    /// goes through ``state(after:from:)``, as an operation's does.
    enum Transition: String, CaseIterable, Sendable {
        /// The host authorized the reserved attempt's transmission.
        case authorize
        /// The attempt ended without a result (its failure code is recorded beside); a failed attempt may
        /// be marked failed again with a later cause.
        case fail
        /// The attempt's validated completion is saved.
        case complete
    }

    /// The state `transition` leads to from `state`, or nil when the attempt's lifecycle does not allow it.
    static func state(after transition: Transition, from state: State) -> State? {
        switch (transition, state) {
        case (.authorize, .reserved): .transmissionAuthorized
        case (.fail, .reserved), (.fail, .transmissionAuthorized), (.fail, .failed): .failed
        case (.complete, .transmissionAuthorized): .completed
        default: nil
        }
    }

    /// Applies `transition`.
    /// - Throws: ``AgentRecoveryError`` `state_invalid` when the attempt's lifecycle does not allow it (the
    ///   attempt is left as it was).
    mutating func apply(_ transition: Transition, operationID: UUID) throws(AgentRecoveryError) {
        guard let next = Self.state(after: transition, from: state) else {
            throw AgentRecoveryError(
                code: .stateInvalid, message: "an attempt that is \(state.rawValue) cannot \(transition.rawValue)", operationID: operationID
            )
        }
        state = next
    }
}
