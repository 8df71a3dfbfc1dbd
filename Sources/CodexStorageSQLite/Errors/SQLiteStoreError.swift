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
        /// Another connection held a lock on the database through 5 s without the database changing (or
        /// 60 s in all); see `SQLiteBusyWait`.
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
        /// No database is at the path (nothing there, or an empty file), or its directory is missing;
        /// the message names the path.
        public static let notFound: Code = "sqlite_not_found"
        /// The file is a SQLite database that is not a CodexKit state store (it has tables of its own and
        /// no `codex_migrations`); it is never adopted or changed.
        public static let foreignDatabase: Code = "sqlite_foreign_database"
        /// The database needs migrations that a read-only open cannot apply (open it for writing once,
        /// for example with `codexctl db migrate`).
        public static let schemaOutdated: Code = "sqlite_schema_outdated"
        /// A store opened read-only was asked to write.
        public static let writeRefused: Code = "sqlite_write_refused"
    }

    /// The stable code.
    public var code: Code
    /// The SQLite (extended) result code, when SQLite reported the failure.
    public var resultCode: Int32?
    /// A short, log-safe explanation.
    public var message: String
    /// The table of the row that failed, for row and schema problems.
    public var table: String?
    /// The key of the row that failed (its primary key, e.g. a thread ID or `thread-id/position`).
    public var rowKey: String?

    /// Creates an error.
    public init(code: Code, resultCode: Int32? = nil, message: String, table: String? = nil, rowKey: String? = nil) {
        self.code = code
        self.resultCode = resultCode
        self.message = message
        self.table = table
        self.rowKey = rowKey
    }

    /// `code: message (table T, row K) (SQLite result N)`.
    public var description: String {
        var text = "\(code.rawValue): \(message)"
        if let table { text += " (table \(table)" + (rowKey.map { ", row \($0)" } ?? "") + ")" }
        if let resultCode { text += " (SQLite result \(resultCode))" }
        return text
    }
}

extension SQLiteStoreError: TransientStoreError {
    /// A busy (locked) database is transient; every other failure is not.
    public var isTransient: Bool { code == .busy }
}

extension SQLiteStoreError: RuntimeStateStoreError {
    /// `thread_not_found` for a missing thread, a conflict for a failed constraint, else a storage failure.
    public var stateStoreFailure: RuntimeStateStoreFailure {
        switch code {
        case .threadNotFound: .threadNotFound
        case .constraint: .conflict
        default: .storageFailure
        }
    }
}
