public import CodexCore

/// The one public error of the PostgreSQL state store: a stable code, the server's SQLSTATE when it gave
/// one, and a log-safe message (never a bound value, stored content or the connection string's password).
public struct PostgresStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable snake_case error code. Unknown codes keep their raw value.
    public struct Code: OpenVocabulary, ExpressibleByStringLiteral {
        /// The code text.
        public let rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Creates a code from a literal.
        public init(stringLiteral value: String) { rawValue = value }

        /// The connection string is not one libpq accepts (the message says why, never what it held).
        public static let invalidConnectionString: Code = "postgres_invalid_connection_string"
        /// The server cannot be reached, refused the connection, or the connection was lost; for a write,
        /// the store checked that it did not land, or could not check (the message says which).
        public static let unavailable: Code = "storage_unavailable"
        /// The server refused the credentials or the database.
        public static let authenticationFailed: Code = "postgres_authentication_failed"
        /// Another transaction held what this one needed (a deadlock or a serialization failure) after
        /// the store's own retries.
        public static let busy: Code = "postgres_busy"
        /// A constraint failed.
        public static let constraint: Code = "postgres_constraint"
        /// Any other failure the server reported (its SQLSTATE is kept).
        public static let failure: Code = "postgres_failure"
        /// A stored row could not be decoded.
        public static let rowUndecodable: Code = "postgres_row_undecodable"
        /// No such thread.
        public static let threadNotFound: Code = "thread_not_found"
        /// The store's schema holds tables that are not a CodexKit state store's; it is never adopted.
        public static let foreignSchema: Code = "postgres_foreign_schema"
        /// The schema was written by a newer build than this one.
        public static let schemaTooNew: Code = "postgres_schema_too_new"
        /// The schema needs migrations that a read-only store cannot apply, or does not exist yet.
        public static let schemaOutdated: Code = "postgres_schema_outdated"
        /// A store opened read-only was asked to write.
        public static let writeRefused: Code = "postgres_write_refused"
    }

    /// The stable code.
    public var code: Code
    /// The server's SQLSTATE (`23505`, `40001`, …), when the server reported the failure.
    public var sqlState: String?
    /// A short, log-safe explanation.
    public var message: String
    /// The table of the row that failed, for row and schema problems.
    public var table: String?
    /// The key of the row that failed.
    public var rowKey: String?
    /// For `storage_unavailable` after a write: the connection broke before the commit was confirmed and
    /// the server could not be asked whether it landed. Such an error is not transient: running the
    /// write again could apply it twice.
    public var writeOutcomeUnknown: Bool

    /// Creates an error.
    public init(code: Code, sqlState: String? = nil, message: String, table: String? = nil, rowKey: String? = nil, writeOutcomeUnknown: Bool = false) {
        self.code = code
        self.sqlState = sqlState
        self.message = message
        self.table = table
        self.rowKey = rowKey
        self.writeOutcomeUnknown = writeOutcomeUnknown
    }

    /// `code: message (table T, row K) (SQLSTATE S)`.
    public var description: String {
        var text = "\(code.rawValue): \(message)"
        if let table { text += " (table \(table)" + (rowKey.map { ", row \($0)" } ?? "") + ")" }
        if let sqlState { text += " (SQLSTATE \(sqlState))" }
        return text
    }
}

extension PostgresStoreError: TransientStoreError {
    /// An unreachable server and a busy database are transient, except a write whose outcome is
    /// unknown; every other failure is not.
    public var isTransient: Bool { (code == .unavailable && !writeOutcomeUnknown) || code == .busy }
}

extension PostgresStoreError: RuntimeStateStoreError {
    /// `thread_not_found` for a missing thread, a conflict for a failed constraint, else a storage failure.
    public var stateStoreFailure: RuntimeStateStoreFailure {
        switch code {
        case .threadNotFound: .threadNotFound
        case .constraint: .conflict
        default: .storageFailure
        }
    }
}
