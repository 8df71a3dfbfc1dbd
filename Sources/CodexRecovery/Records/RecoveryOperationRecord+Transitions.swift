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
