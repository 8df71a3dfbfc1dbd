/// The one error of every ``MemoryStoring`` store: a stable code, the limit a record or query broke,
/// a log-safe message (never record text, never query text) and the underlying cause.
///
/// ```swift
/// do {
///     try await store.upsert(record)
/// } catch {
///     print(error.code, error.limit ?? "")   // e.g. memory_record_invalid summary_bytes
/// }
/// ```
public struct MemoryStoreError: Error, Sendable, CustomStringConvertible {
    /// A stable snake_case code. Unknown codes keep their raw value.
    public struct Code: OpenVocabulary, ExpressibleByStringLiteral {
        /// The code text.
        public let rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Creates a code from a literal.
        public init(stringLiteral value: String) { rawValue = value }

        /// A record breaks a limit (see ``MemoryStoreError/limit``); nothing was written.
        public static let recordInvalid: Code = "memory_record_invalid"
        /// A query breaks a limit (see ``MemoryStoreError/limit``).
        public static let queryInvalid: Code = "memory_query_invalid"
        /// An upsert's ID names one record and its dedupe key another; nothing was written.
        public static let dedupeConflict: Code = "memory_dedupe_conflict"
        /// The SQLite library has no FTS5; the store refuses to open.
        public static let fullTextUnavailable: Code = "memory_fts5_unavailable"
        /// No memory store is at the path (nothing there, an empty file, a missing directory).
        public static let notFound: Code = "memory_store_not_found"
        /// The file is not a database, is corrupt, or is a memory store missing its tables.
        public static let corrupt: Code = "memory_store_corrupt"
        /// The file is a SQLite database of something else; it is never adopted or changed.
        public static let foreignDatabase: Code = "memory_store_foreign"
        /// The store was written by a newer schema than this build knows.
        public static let schemaTooNew: Code = "memory_schema_too_new"
        /// The store needs a migration that a read-only open cannot apply.
        public static let schemaOutdated: Code = "memory_schema_outdated"
        /// A store opened read-only was asked to write; nothing was written.
        public static let writeRefused: Code = "memory_write_refused"
        /// A stored record could not be decoded.
        public static let recordUndecodable: Code = "memory_record_undecodable"
        /// Any other storage failure (see ``MemoryStoreError/underlying``).
        public static let storageFailure: Code = "memory_storage_failure"
    }

    /// The stable code.
    public var code: Code
    /// The limit that was broken, for ``Code/recordInvalid`` and ``Code/queryInvalid``.
    public var limit: MemoryLimit?
    /// A short, log-safe explanation.
    public var message: String
    /// The cause (for example the SQLite store's error), when there is one.
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(code: Code, limit: MemoryLimit? = nil, message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.limit = limit
        self.message = message
        self.underlying = underlying
    }

    /// A record that breaks `limit`.
    public static func invalidRecord(_ limit: MemoryLimit, _ message: String) -> MemoryStoreError {
        MemoryStoreError(code: .recordInvalid, limit: limit, message: message)
    }

    /// A query that breaks `limit`.
    public static func invalidQuery(_ limit: MemoryLimit, _ message: String) -> MemoryStoreError {
        MemoryStoreError(code: .queryInvalid, limit: limit, message: message)
    }

    /// `code: message (limit L)`, plus the cause's description when there is one.
    public var description: String {
        var text = "\(code.rawValue): \(message)"
        if let limit { text += " (limit \(limit.rawValue))" }
        if let underlying { text += " [\(String(describing: underlying))]" }
        return text
    }
}
