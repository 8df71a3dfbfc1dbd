public import Foundation
public import CodexCore

/// The one public error of structured request recovery: a stable code, a log-safe message, and where
/// they apply the operation and the operating-system error number.
///
/// Storage failures (`storage_failure`, `disk_full`, `storage_limit_exceeded`, `record_corrupt`,
/// `unsupported_record_version`, `insecure_store`) are distinguishable from transport failures, which
/// stay ``CodexCore/AgentRuntimeError``. ``description`` never contains prompts, model output,
/// credentials, account identifiers or host scope and job strings.
///
/// ```swift
/// do {
///     try store.inventory(binding: binding)
/// } catch let error as AgentRecoveryError where error.code == .storageLimitExceeded {
///     // free space or raise the quota; nothing was evicted
/// }
/// ```
public struct AgentRecoveryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable snake_case error code. Unknown codes keep their raw value.
    public struct Code: OpenVocabulary, ExpressibleByStringLiteral {
        /// The code text.
        public let rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Creates a code from a literal.
        public init(stringLiteral value: String) { rawValue = value }

        /// The request cannot be recovered: it is not ephemeral (persistent threads are refused).
        public static let ephemeralRequired: Code = "ephemeral_required"
        /// The request requires tools; recovery is tool-free.
        public static let toolsUnsupported: Code = "tools_unsupported"
        /// A preparation argument is out of range (attempt budget, identifier length, expiry).
        public static let invalidRecoveryConfiguration: Code = "invalid_recovery_configuration"
        /// No record, or it was acknowledged or abandoned: nothing to send or read.
        public static let stateUnavailable: Code = "state_unavailable"
        /// Permission to start a new attempt expired.
        public static let stateExpired: Code = "state_expired"
        /// The record contradicts itself or the requested action.
        public static let stateInvalid: Code = "state_invalid"
        /// Another execution holds the operation's lease.
        public static let operationBusy: Code = "operation_busy"
        /// The requested output format or contract version differs from the saved one.
        public static let formatMismatch: Code = "format_mismatch"
        /// The attempt budget is spent.
        public static let attemptsExhausted: Code = "attempts_exhausted"
        /// The host's authorization callback denied the attempt (nothing was spent).
        public static let attemptNotAuthorized: Code = "attempt_not_authorized"
        /// The operation failed terminally; see its status' last failure.
        public static let permanentlyFailed: Code = "permanently_failed"
        /// The operation was permanently cancelled.
        public static let cancelled: Code = "cancelled"
        /// No saved completion exists (or it could not be saved).
        public static let completionUnavailable: Code = "completion_unavailable"
        /// The operation is suspended.
        public static let suspended: Code = "suspended"
        /// The record's format version is not one this build reads; the file is left untouched.
        public static let unsupportedRecordVersion: Code = "unsupported_record_version"
        /// A record is corrupt, truncated, of another operation, or its digest does not match; it is left untouched.
        public static let recordCorrupt: Code = "record_corrupt"
        /// The store's quota or the per-record limit would be exceeded; nothing is evicted.
        public static let storageLimitExceeded: Code = "storage_limit_exceeded"
        /// The file system is full (`ENOSPC`, `EDQUOT`).
        public static let diskFull: Code = "disk_full"
        /// Any other file-system failure (`EIO`, `EACCES`, `EROFS`, a failed `fsync`, …).
        public static let storageFailure: Code = "storage_failure"
        /// The store directory or one of its files is a symbolic link, a hard link, a special file, or
        /// owned by another user.
        public static let insecureStore: Code = "insecure_store"
        /// The record belongs to another account binding.
        public static let accountMismatch: Code = "account_mismatch"
        /// A successor was already created for another retry action.
        public static let retryAlreadyCreated: Code = "retry_already_created"
        /// Manual retry is not allowed from the source's current state.
        public static let retryNotAllowed: Code = "retry_not_allowed"
        /// The same retry action was repeated with different settings.
        public static let retryConfigurationMismatch: Code = "retry_configuration_mismatch"
        /// No store is at the path given to a read-only open (the message names the path).
        public static let storeNotFound: Code = "store_not_found"
        /// A store opened read-only was asked to change something; nothing was touched.
        public static let storeReadOnly: Code = "store_read_only"
    }

    /// The stable code.
    public var code: Code
    /// A short, log-safe explanation.
    public var message: String
    /// The operation concerned, when there is one.
    public var operationID: UUID?
    /// The operating-system error number behind a storage failure.
    public var systemErrorNumber: Int32?
    /// The error this one wraps (a failed system call, a decoding error), when there is one. Not part of
    /// equality or hashing, and not shown in ``description``.
    public var underlying: (any Error)?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The stable code.
    ///   - message: A short, log-safe explanation.
    ///   - operationID: The operation concerned.
    ///   - systemErrorNumber: The `errno` behind a storage failure.
    ///   - underlying: The error this one wraps.
    public init(code: Code, message: String, operationID: UUID? = nil, systemErrorNumber: Int32? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.operationID = operationID
        self.systemErrorNumber = systemErrorNumber
        self.underlying = underlying
    }

    /// Equal when every field but ``underlying`` is equal.
    public static func == (lhs: AgentRecoveryError, rhs: AgentRecoveryError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.operationID == rhs.operationID && lhs.systemErrorNumber == rhs.systemErrorNumber
    }

    /// Hashes every field but ``underlying``.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(operationID)
        hasher.combine(systemErrorNumber)
    }

    /// Whether this is a storage-side failure (as opposed to a lifecycle or policy decision).
    public var isStorageFailure: Bool {
        [.storageFailure, .diskFull, .storageLimitExceeded, .recordCorrupt, .unsupportedRecordVersion, .insecureStore].contains(code)
    }

    /// `code: message [operation <id>] (errno N)`.
    public var description: String {
        var text = "\(code.rawValue): \(message)"
        if let operationID { text += " [operation \(operationID.uuidString.lowercased())]" }
        if let systemErrorNumber { text += " (errno \(systemErrorNumber))" }
        return text
    }
}
