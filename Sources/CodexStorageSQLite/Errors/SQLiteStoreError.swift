public import CodexCore

/// The one public error of the SQLite state store: a stable code, the SQLite result code when one is
/// involved, and a log-safe message (never a bound value, never stored content).
public struct SQLiteStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable snake_case error code. Unknown codes keep their raw value.
    public struct Code: OpenVocabulary, ExpressibleByStringLiteral {
        /// The code text.
        public let rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Creates a code from a literal.
        public init(stringLiteral value: String) { rawValue = value }

        /// The database file could not be opened.
        public static let openFailed: Code = "sqlite_open_failed"
        /// The file is not a database, or is corrupt or truncated; it is never recreated silently.
        public static let corrupt: Code = "sqlite_corrupt"
        /// The database was written by a newer schema than this build knows.
        public static let schemaTooNew: Code = "sqlite_schema_too_new"
        /// Another connection held the database longer than the busy timeout.
        public static let busy: Code = "sqlite_busy"
        /// The disk (or its quota) is full.
        public static let diskFull: Code = "sqlite_disk_full"
        /// An I/O error.
        public static let ioFailure: Code = "sqlite_io_failure"
        /// The file or directory is read-only or not permitted.
        public static let readOnly: Code = "sqlite_read_only"
        /// A constraint failed (for example a history item for a thread that does not exist).
        public static let constraint: Code = "sqlite_constraint"
        /// Any other SQLite failure.
        public static let failure: Code = "sqlite_failure"
        /// A stored row could not be decoded.
        public static let rowUndecodable: Code = "sqlite_row_undecodable"
        /// No such thread.
        public static let threadNotFound: Code = "thread_not_found"
    }

    /// The stable code.
    public var code: Code
    /// The SQLite (extended) result code, when SQLite reported the failure.
    public var resultCode: Int32?
    /// A short, log-safe explanation.
    public var message: String

    /// Creates an error.
    public init(code: Code, resultCode: Int32? = nil, message: String) {
        self.code = code
        self.resultCode = resultCode
        self.message = message
    }

    /// `code: message (SQLite result N)`.
    public var description: String {
        "\(code.rawValue): \(message)" + (resultCode.map { " (SQLite result \($0))" } ?? "")
    }
}

extension SQLiteStoreError: TransientStoreError {
    /// A busy (locked) database is transient; every other failure is not.
    public var isTransient: Bool { code == .busy }
}
