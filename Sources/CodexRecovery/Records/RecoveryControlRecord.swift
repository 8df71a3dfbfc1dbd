import Foundation

/// `<id>.control.json`: the lifecycle command another execution can write without the operation lease.
struct RecoveryControlRecord: RecoveryRecord, Equatable {
    /// The command an owner must obey at its next check.
    enum Command: String, Codable, Sendable {
        /// Run (written by the execution that starts, with its run ID).
        case active
        /// Stop and keep the budget.
        case suspended
        /// Stop for good; fence late delivery.
        case cancelled
    }

    static let supportedVersions = 1...1
    static let fileSuffix = ".control.json"
    static let currentVersion = 1

    var version: Int = Self.currentVersion
    var operationID: UUID
    var runID: UUID
    var command: Command
    var updatedAt: Date

    func checkInvariants() throws(RecoveryRecordInvariantError) {}
}

/// `<id>.disposition.json`: the small marker left after acknowledgement or abandonment, so both stay
/// idempotent and status can answer after the content is gone.
struct RecoveryDispositionRecord: RecoveryRecord, Equatable {
    /// How the operation ended.
    enum State: String, Codable, Sendable {
        /// The host committed the result and acknowledged it.
        case acknowledged
        /// The host abandoned the operation.
        case abandoned
    }

    static let supportedVersions = 1...1
    static let fileSuffix = ".disposition.json"
    static let currentVersion = 1

    var version: Int = Self.currentVersion
    var operationID: UUID
    var binding: String
    var scope: String?
    var state: State
    var disposedAt: Date
    var previousOperationID: UUID?
    var successorID: UUID?

    func checkInvariants() throws(RecoveryRecordInvariantError) {
        guard !binding.isEmpty else { throw RecoveryRecordInvariantError("the disposition has no account binding") }
    }
}
