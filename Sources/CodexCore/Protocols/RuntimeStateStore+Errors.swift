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
///
/// Its `description`, when it is `CustomStringConvertible`, must be log-safe (no stored content, no
/// bound values): the runtime appends it to the message of its own error.
public protocol RuntimeStateStoreError: Error {
    /// What the failure means.
    var stateStoreFailure: RuntimeStateStoreFailure { get }
}

extension AgentRuntimeError {
    /// The runtime's error for a state store's failure: an ``AgentRuntimeError`` stays as it is; a
    /// ``RuntimeStateStoreError`` gets the code its meaning names; anything else is `storage_failure`.
    /// The store's error is kept as ``underlying``; for a storage failure its log-safe text (which
    /// names the file and the system's cause for a file failure) ends the message.
    public static func stateStore(_ error: any Error) -> AgentRuntimeError {
        if let error = error as? AgentRuntimeError { return error }
        let failure = (error as? any RuntimeStateStoreError)?.stateStoreFailure ?? .storageFailure
        let message = switch failure {
        case .threadNotFound: "no such thread"
        case .conflict: "the write contradicts the stored state"
        case .storageFailure: "the state store failed"
        }
        // A store's own error is log-safe by contract: its text says which file and why.
        let detail = failure == .storageFailure ? (error as? any RuntimeStateStoreError & CustomStringConvertible).map { ": " + $0.description } ?? "" : ""
        return AgentRuntimeError(code: Code(rawValue: failure.rawValue), message: message + detail, underlying: error)
    }
}
