private import CSQLite
import CodexCore
import Foundation

/// One SQLite connection with a cache of prepared statements. Not thread-safe: it is only ever used on
/// the queue of the ``SQLiteDatabase`` that owns it, inside an access closure, and never escapes one.
/// (`@unchecked Sendable` so those closures can name it; the queue is the synchronization.)
final class SQLiteConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    /// The file, for failure messages that name it.
    private let path: String
    private var statements: [String: OpaquePointer] = [:]
    /// The busy handler's state (nil for an in-memory database, which no other connection shares).
    private let busyWaiter: SQLiteBusyWaiter?

    /// How a connection opens its file.
    enum OpenMode {
        /// Read and write an existing file (or `:memory:`).
        case readWrite
        /// Read only; `immutable` also tells SQLite the file cannot change (no locks, no `-shm`/`-wal`
        /// files are created), which is only correct while no other connection writes.
        case readOnly(immutable: Bool)
    }

    /// Opens `path` (`:memory:` for a private in-memory database); the file must exist (callers create
    /// it, with the permissions they want, before opening).
    init(path: String, mode: OpenMode) throws(SQLiteStoreError) {
        var pointer: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let name: String
        switch mode {
        case .readWrite:
            flags |= SQLITE_OPEN_READWRITE
            name = path
        case .readOnly(let immutable):
            // A URI, so `immutable=1` can be given; `mode=ro` keeps SQLite from ever creating the file.
            flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
            name = "file:" + Self.uriEscaped(path) + (immutable ? "?mode=ro&immutable=1" : "?mode=ro")
        }
        self.path = path
        let result = sqlite3_open_v2(name, &pointer, flags, nil)
        guard result == SQLITE_OK, let pointer else {
            let cause = pointer.map { Self.systemCause(sqlite3_system_errno($0)) } ?? ""
            if let pointer { sqlite3_close_v2(pointer) }
            throw SQLiteStoreError(code: Self.code(for: result, opening: true), resultCode: result, message: "cannot open the database at \(path)\(cause)")
        }
        handle = pointer
        if path == ":memory:" {
            busyWaiter = nil
        } else {
            // Waits while another connection holds a lock for as long as the database keeps changing
            // (see SQLiteBusyWait), not a fixed time; the waiter lives as long as the connection.
            let waiter = SQLiteBusyWaiter(path: path)
            busyWaiter = waiter
            sqlite3_busy_handler(handle, sqliteBusyCallback, Unmanaged.passUnretained(waiter).toOpaque())
        }
        sqlite3_extended_result_codes(handle, 1)
        var ignored: Int32 = 0
        _ = csqlite_db_config_int(handle, SQLITE_DBCONFIG_DEFENSIVE, 1, &ignored)
    }

    /// The first `count` bytes of the database file at `path` (zeros past its end), read through SQLite's
    /// own file layer rather than a descriptor of ours: closing any descriptor of a file drops every
    /// POSIX lock the process holds on it, including the locks this process's open connections keep,
    /// while SQLite's layer keeps such a descriptor open until those locks are released.
    static func header(of path: String, count: Int) throws(SQLiteStoreError) -> [UInt8] {
        let connection = try SQLiteConnection(path: path, mode: .readOnly(immutable: false))
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(connection.handle, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK, let file,
              let read = file.pointee.pMethods?.pointee.xRead else {
            throw SQLiteStoreError(code: .ioFailure, message: "cannot read the header of \(path)")
        }
        var bytes = [UInt8](repeating: 0, count: count)
        let result = bytes.withUnsafeMutableBytes { read(file, $0.baseAddress, Int32(count), 0) }
        // A file shorter than `count` is a short read (SQLITE_IOERR_SHORT_READ), its missing bytes zeros.
        guard result == SQLITE_OK || result == SQLITE_IOERR | (2 << 8) else {
            throw SQLiteStoreError(code: .ioFailure, resultCode: result, message: "cannot read the header of \(path)\(Self.systemCause(sqlite3_system_errno(connection.handle)))")
        }
        return bytes
    }

    /// `path` for a `file:` URI: everything but unreserved characters and `/` percent-encoded.
    static func uriEscaped(_ path: String) -> String {
        var escaped = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                escaped += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return escaped
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// The SQLite library version number (e.g. 3040001).
    static var libraryVersion: Int32 { sqlite3_libversion_number() }

    /// SQLite's message for the last failure on this connection (at most 200 characters), or `nil`.
    /// It names our statements' tables and columns, never bound values.
    var lastErrorMessage: String? {
        guard let text = sqlite3_errmsg(handle) else { return nil }
        let message = String(cString: text)
        guard !message.isEmpty, message != "not an error" else { return nil }
        return String(message.prefix(200))
    }

    /// Runs SQL without results (several statements allowed).
    func execute(_ sql: String) throws(SQLiteStoreError) {
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw failure(result, "a statement failed") }
    }

    /// Runs one cached statement with `bindings` and calls `row` for each result row.
    func run(_ sql: String, _ bindings: [SQLiteValue] = [], row: ((SQLiteRow) throws(SQLiteStoreError) -> Void)? = nil) throws(SQLiteStoreError) {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, value) in bindings.enumerated() {
            let position = Int32(index + 1)
            let result: Int32
            switch value {
            case .null: result = sqlite3_bind_null(statement, position)
            case .integer(let number): result = sqlite3_bind_int64(statement, position, number)
            case .real(let number): result = sqlite3_bind_double(statement, position, number)
            case .text(let text):
                // The explicit byte count keeps text with NUL bytes whole.
                let bytes = Array(text.utf8) + [0]
                result = bytes.withUnsafeBytes { buffer in
                    sqlite3_bind_text(
                        statement, position, buffer.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(buffer.count - 1), csqlite_transient()
                    )
                }
            case .blob(let bytes):
                result = bytes.withUnsafeBytes { sqlite3_bind_blob(statement, position, $0.baseAddress, Int32($0.count), csqlite_transient()) }
            }
            guard result == SQLITE_OK else { throw failure(result, "a value could not be bound") }
        }
        while true {
            let result = sqlite3_step(statement)
            if result == SQLITE_DONE { return }
            guard result == SQLITE_ROW else { throw failure(result, "a statement failed") }
            try row?(SQLiteRow(statement: statement))
        }
    }

    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }

    private func prepared(_ sql: String) throws(SQLiteStoreError) -> OpaquePointer {
        if let cached = statements[sql] { return cached }
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard result == SQLITE_OK, let statement else {
            // A table or column the statement needs is gone: the store is damaged, and SQLite's reason
            // names only our own schema, so it is said.
            let reason = String(cString: sqlite3_errmsg(handle))
            if result == SQLITE_ERROR, reason.hasPrefix("no such table: ") || reason.hasPrefix("no such column: ") {
                throw SQLiteStoreError(code: .corrupt, resultCode: result, message: "a statement could not be prepared on \(path): \(reason)")
            }
            throw failure(result, "a statement could not be prepared")
        }
        statements[sql] = statement
        return statement
    }

    /// The store's error for `result`; a failure of the file itself (full, I/O, read-only, cannot
    /// open) also names the file and the system's cause.
    private func failure(_ result: Int32, _ message: String) -> SQLiteStoreError {
        let code = Self.code(for: result, opening: false)
        if code == .corrupt {
            // Which file is damaged is what the reader needs to restore it.
            return SQLiteStoreError(code: code, resultCode: result, message: "\(message) on \(path): the file is damaged")
        }
        guard [.diskFull, .ioFailure, .readOnly, .openFailed].contains(code) else {
            return SQLiteStoreError(code: code, resultCode: result, message: message)
        }
        // A write-ahead log left without its shared-memory file, in a directory this process cannot write:
        // SQLite cannot make the file it needs to read the log. The system's cause ("No such file") would
        // send the reader looking for a file that is there.
        let directory = FilePathText.parent(of: path)
        if code == .openFailed, access(path + "-wal", F_OK) == 0, access(path + "-shm", F_OK) != 0,
           access(directory.isEmpty ? "." : directory, W_OK) != 0 {
            return SQLiteStoreError(
                code: .readOnly, resultCode: result,
                message: "\(message) on \(path): it has a write-ahead log but no shared-memory file, and none can be made beside it "
                    + "(the directory is read-only); open it once where its directory can be written"
            )
        }
        let cause = Self.systemCause(sqlite3_system_errno(handle))
        return SQLiteStoreError(code: code, resultCode: result, message: "\(message) on \(path)\(cause.isEmpty ? fallbackCause(code) : cause)")
    }

    /// `: <strerror>` for a system error number, or nothing for none.
    private static func systemCause(_ number: Int32) -> String {
        number == 0 ? "" : ": " + String(cString: strerror(number))
    }

    /// What a file failure means when SQLite kept no error number: for a full database, whether the
    /// file system has space left (`statvfs`) tells a full disk from the database's own page limit.
    private func fallbackCause(_ code: SQLiteStoreError.Code) -> String {
        switch code {
        case .diskFull:
            let directory = FilePathText.parent(of: path)
            var info = statvfs()
            guard statvfs(directory.isEmpty ? "." : directory, &info) == 0 else { return ": the database or disk is full" }
            let available = UInt64(info.f_bavail) * UInt64(info.f_frsize)
            return available < 1 << 20 ? ": " + String(cString: strerror(ENOSPC)) : ": the database reached its size limit"
        case .readOnly: return ": the database is read-only"
        default: return ""
        }
    }

    /// Maps a result code (primary part) to the store's code.
    static func code(for result: Int32, opening: Bool) -> SQLiteStoreError.Code {
        switch result & 0xFF {
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .corrupt
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy
        case SQLITE_FULL: return .diskFull
        case SQLITE_IOERR: return .ioFailure
        case SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH: return .readOnly
        case SQLITE_CONSTRAINT: return .constraint
        case SQLITE_CANTOPEN: return .openFailed
        default: return opening ? .openFailed : .failure
        }
    }
}

/// A value bound to a statement parameter.
enum SQLiteValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// The current row of a stepping statement; valid only inside the row closure.
struct SQLiteRow {
    fileprivate let statement: OpaquePointer

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
    func real(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Runs `body` on the blob's bytes in place (valid only inside `body`; no copy is made).
    func withBlob<Output, Failure: Error>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> Output) throws(Failure) -> Output {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeBufferPointer(start: pointer.assumingMemoryBound(to: UInt8.self), count: count))
    }
}
