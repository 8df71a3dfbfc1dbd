/// What a state store's failure means, whatever the store.
public enum RuntimeStateStoreFailure: String, Sendable, Hashable {
    /// The thread a write names does not exist; nothing was written (`thread_not_found`).
    case threadNotFound = "thread_not_found"
    /// The write contradicts stored data in another way (`storage_conflict`).
    case conflict = "storage_conflict"
    /// Any other failure of the store (`storage_failure`).
    case storageFailure = "storage_failure"
}

/// A store's own error type, telling the runtime what it means (see ``RuntimeStateStore``).
public protocol RuntimeStateStoreError: Error {
    /// What the failure means.
    var stateStoreFailure: RuntimeStateStoreFailure { get }
}

extension AgentRuntimeError {
    /// The runtime's error for a state store's failure: an ``AgentRuntimeError`` stays as it is; a
    /// ``RuntimeStateStoreError`` gets the code its meaning names; anything else is `storage_failure`.
    /// The store's error is kept as ``underlying`` (its message is the store's log-safe text).
    public static func stateStore(_ error: any Error) -> AgentRuntimeError {
        if let error = error as? AgentRuntimeError { return error }
        let failure = (error as? any RuntimeStateStoreError)?.stateStoreFailure ?? .storageFailure
        let message = switch failure {
        case .threadNotFound: "no such thread"
        case .conflict: "the write contradicts the stored state"
        case .storageFailure: "the state store failed"
        }
        return AgentRuntimeError(code: Code(rawValue: failure.rawValue), message: message, underlying: error)
    }
}
