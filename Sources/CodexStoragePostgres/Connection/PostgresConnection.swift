private import CLibPQ
import Foundation

/// One libpq connection with a cache of prepared statements. Not thread-safe: the pool lends it to one
/// caller at a time, and every call runs on the connection's own serial queue, never on the cooperative
/// thread pool (libpq blocks on the network). (`@unchecked Sendable` so the queue's closures can name it;
/// the pool and the queue are the synchronization.)
final class PostgresConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    /// Where this connection's blocking calls run.
    let queue: DispatchQueue
    /// Secrets of the connection string, removed from any text that could reach an error.
    private let secrets: [String]
    private var statements: [String: String] = [:]
    /// Statements whose replies nobody waits for (`BEGIN`, a write key, row inserts): sent together with
    /// the next statement that needs a reply, in one pipelined round trip.
    private var pending: [(sql: String, parameters: [PostgresValue])] = []

    /// Connects with `settings` (blocking; call it on a queue of its own).
    /// - Throws: ``PostgresStoreError`` `storage_unavailable` (no server, refused, lost),
    ///   `postgres_authentication_failed` (credentials or database refused),
    ///   `postgres_invalid_connection_string`.
    init(_ settings: PostgresConnectionSettings) throws(PostgresStoreError) {
        var keywords = ["dbname", "application_name", "connect_timeout"]
        var values = [settings.connectionString, settings.applicationName, "10"]
        if settings.readOnly {
            keywords.append("options")
            values.append("-c default_transaction_read_only=on")
        }
        let cKeywords = keywords.map { strdup($0) } + [nil]
        let cValues = values.map { strdup($0) } + [nil]
        defer {
            cKeywords.forEach { free($0) }
            cValues.forEach { free($0) }
        }
        let connection: OpaquePointer? = cKeywords.map { UnsafePointer($0) }.withUnsafeBufferPointer { keywordPointers in
            cValues.map { UnsafePointer($0) }.withUnsafeBufferPointer { valuePointers in
                PQconnectdbParams(keywordPointers.baseAddress, valuePointers.baseAddress, 1)
            }
        }
        guard let connection else {
            throw PostgresStoreError(code: .unavailable, message: "libpq could not allocate a connection")
        }
        secrets = settings.secrets
        guard PQstatus(connection) == CONNECTION_OK else {
            let text = Self.redact(String(cString: PQerrorMessage(connection)), secrets: settings.secrets)
            PQfinish(connection)
            throw Self.connectFailure(text)
        }
        handle = connection
        // Notices (a cascading drop, a rollback outside a transaction) are not errors, and libpq's default
        // prints them to standard error.
        _ = PQsetNoticeReceiver(connection, { _, _ in }, nil)
        queue = DispatchQueue(label: "codexkit.postgres.connection")
        if let schema = settings.schema {
            try execute("SET search_path TO \(PostgresConnection.quoted(schema)), pg_catalog")
        }
    }

    deinit { PQfinish(handle) }

    /// Whether the connection is still usable (libpq saw no break).
    var isHealthy: Bool { PQstatus(handle) == CONNECTION_OK }

    /// The connection's socket, for waiting until the server says something (or hangs up).
    var socket: Int32 { PQsocket(handle) }

    /// Reads what the server sent without waiting; returns whether the connection is still good.
    func consumeInput() -> Bool { PQconsumeInput(handle) == 1 && isHealthy }

    /// The server's version number (150018 for 15.18).
    var serverVersion: Int { Int(PQserverVersion(handle)) }

    /// `identifier` as a quoted SQL identifier.
    static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Runs SQL without parameters (several statements allowed); its rows are ignored.
    func execute(_ sql: String) throws(PostgresStoreError) {
        guard let result = PQexec(handle, sql) else { throw lost() }
        defer { PQclear(result) }
        try check(result)
    }

    /// Runs one prepared statement with `parameters` and calls `row` for each result row.
    /// - Returns: The number of rows the statement affected (0 for a query).
    @discardableResult
    func run(_ sql: String, _ parameters: [PostgresValue] = [], row: ((PostgresRow) throws(PostgresStoreError) -> Void)? = nil) throws(PostgresStoreError) -> Int {
        if !pending.isEmpty {
            let batch = pending + [(sql, parameters)]
            pending = []
            return try pipeline(batch, row: row)
        }
        let name = try prepared(sql)
        let result: OpaquePointer? = Self.withParameters(parameters) { count, values, lengths, formats in
            PQexecPrepared(handle, name, count, values, lengths, formats, 1)
        }
        guard let result else { throw lost() }
        defer { PQclear(result) }
        try check(result)
        if let row {
            let count = PQntuples(result)
            var index: Int32 = 0
            while index < count {
                try row(PostgresRow(result: result, index: index))
                index += 1
            }
        }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// Queues a statement whose reply nobody needs now: it is sent with the next statement that needs one
    /// (or with ``commit()``), in one pipelined round trip; its failure is thrown there.
    func enqueue(_ sql: String, _ parameters: [PostgresValue] = []) {
        pending.append((sql, parameters))
    }

    /// Opens a transaction; `BEGIN` travels with the transaction's first statement.
    func begin(_ sql: String = "BEGIN") { enqueue(sql) }

    /// Commits: the queued statements and `COMMIT` in one round trip.
    func commit() throws(PostgresStoreError) { try run("COMMIT") }

    /// Rolls back, dropping what was queued.
    func rollback() {
        pending = []
        if isHealthy { try? execute("ROLLBACK") }
    }

    /// Sends `batch` in libpq's pipeline mode and reads every reply in order; `row` sees the last
    /// statement's rows. The first failure is thrown once every reply is read (the statements after it
    /// were not applied; the caller's transaction rolls back).
    /// - Returns: The rows the last statement affected.
    private func pipeline(_ batch: [(sql: String, parameters: [PostgresValue])], row: ((PostgresRow) throws(PostgresStoreError) -> Void)?) throws(PostgresStoreError) -> Int {
        var names: [String] = []
        for statement in batch { names.append(try prepared(statement.sql)) }
        guard PQenterPipelineMode(handle) == 1 else { throw lost() }
        defer { _ = PQexitPipelineMode(handle) }
        for (index, statement) in batch.enumerated() {
            let sent = Self.withParameters(statement.parameters) { count, values, lengths, formats in
                PQsendQueryPrepared(handle, names[index], count, values, lengths, formats, 1)
            }
            guard sent == 1 else { throw lost() }
        }
        guard PQpipelineSync(handle) == 1 else { throw lost() }
        var failure: PostgresStoreError?
        var index = 0
        var affected = 0
        // Each statement's result is followed by a null; the sync point ends the batch.
        while true {
            guard let result = PQgetResult(handle) else {
                guard isHealthy else { throw failure ?? lost() }
                index += 1
                continue
            }
            defer { PQclear(result) }
            let status = PQresultStatus(result)
            if status == PGRES_PIPELINE_SYNC { break }
            if status == PGRES_PIPELINE_ABORTED { continue }
            do throws(PostgresStoreError) {
                try check(result)
            } catch {
                if failure == nil { failure = error }
                continue
            }
            if index == batch.count - 1, failure == nil {
                if let row {
                    let count = PQntuples(result)
                    var tuple: Int32 = 0
                    while tuple < count {
                        do throws(PostgresStoreError) { try row(PostgresRow(result: result, index: tuple)) } catch { failure = error }
                        tuple += 1
                    }
                }
                affected = Int(String(cString: PQcmdTuples(result))) ?? 0
            }
        }
        if let failure { throw failure }
        return affected
    }

    /// Calls `body` with libpq's parameter arrays for `parameters`: numbers, text and booleans as text
    /// (the server parses them into the column's type), bytes in binary.
    private static func withParameters<T>(
        _ parameters: [PostgresValue],
        _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> T
    ) -> T {
        var owned: [UnsafeMutablePointer<CChar>?] = []
        defer { owned.forEach { free($0) } }
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for parameter in parameters {
            switch parameter {
            case .null:
                owned.append(nil)
                lengths.append(0)
                formats.append(0)
            case .bytes(let bytes):
                // malloc, as every other buffer here: all are released with free.
                let copy = malloc(max(1, bytes.count))
                bytes.withUnsafeBytes { source in
                    if let copy, let base = source.baseAddress { copy.copyMemory(from: base, byteCount: bytes.count) }
                }
                owned.append(copy?.assumingMemoryBound(to: CChar.self))
                lengths.append(Int32(bytes.count))
                formats.append(1)
            default:
                let text = parameter.text ?? ""
                owned.append(strdup(text))
                lengths.append(Int32(text.utf8.count))
                formats.append(0)
            }
        }
        return owned.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
            lengths.withUnsafeBufferPointer { lengths in
                formats.withUnsafeBufferPointer { formats in
                    body(Int32(parameters.count), values.baseAddress, lengths.baseAddress, formats.baseAddress)
                }
            }
        }
    }

    /// The name of `sql`'s prepared statement, preparing it on first use.
    private func prepared(_ sql: String) throws(PostgresStoreError) -> String {
        if let name = statements[sql] { return name }
        let name = "codexkit_\(statements.count + 1)"
        guard let result = PQprepare(handle, name, sql, 0, nil) else { throw lost() }
        defer { PQclear(result) }
        try check(result)
        statements[sql] = name
        return name
    }

    /// Throws the typed error a failed result means.
    private func check(_ result: OpaquePointer) throws(PostgresStoreError) {
        let status = PQresultStatus(result)
        guard status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK, status != PGRES_EMPTY_QUERY else { return }
        let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        guard isHealthy, let state else { throw lost() }
        let table = PQresultErrorField(result, Int32(UInt8(ascii: "t"))).map { String(cString: $0) }
        let constraint = PQresultErrorField(result, Int32(UInt8(ascii: "n"))).map { String(cString: $0) }
        throw Self.failure(sqlState: state, table: table, constraint: constraint)
    }

    /// The server's failure as a typed error: the class of its SQLSTATE decides the code; the message
    /// names only schema objects (a constraint, a table), never the server's text, which may echo values.
    static func failure(sqlState state: String, table: String?, constraint: String?) -> PostgresStoreError {
        let code: PostgresStoreError.Code
        let message: String
        switch state {
        case "40001", "40P01":
            code = .busy
            message = "the transaction conflicted with another one"
        case "25006":
            code = .writeRefused
            message = "the connection is read-only"
        case _ where state.hasPrefix("23"):
            code = .constraint
            message = "a constraint failed" + (constraint.map { " (\($0))" } ?? "")
        case _ where state.hasPrefix("08") || state.hasPrefix("57P"):
            code = .unavailable
            message = "the server ended the connection"
        case _ where state.hasPrefix("28") || state == "3D000":
            code = .authenticationFailed
            message = "the server refused the role or the database"
        default:
            code = .failure
            message = "the server refused a statement"
        }
        return PostgresStoreError(code: code, sqlState: state, message: message, table: table)
    }

    /// The connection broke during a call.
    private func lost() -> PostgresStoreError {
        let text = Self.redact(String(cString: PQerrorMessage(handle)), secrets: secrets)
        return PostgresStoreError(code: .unavailable, message: "the connection to the server was lost" + Self.firstLine(text))
    }

    /// A connection failure as a typed error: refused credentials or database, or an unreachable server.
    static func connectFailure(_ text: String) -> PostgresStoreError {
        let lower = text.lowercased()
        if lower.contains("authentication") || lower.contains("does not exist") || lower.contains("no pg_hba.conf entry") || lower.contains("password") {
            return PostgresStoreError(code: .authenticationFailed, message: "the server refused the connection" + firstLine(text))
        }
        if lower.contains("invalid connection option") || lower.contains("invalid uri") || lower.contains("missing \"=\"") || lower.contains("unterminated") {
            return PostgresStoreError(code: .invalidConnectionString, message: "libpq cannot read the connection string" + firstLine(text))
        }
        return PostgresStoreError(code: .unavailable, message: "cannot connect to the server" + firstLine(text))
    }

    /// `: <the first line of libpq's text>`, or nothing.
    private static func firstLine(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? ""
        return line.isEmpty ? "" : ": " + line
    }

    /// `text` with every secret replaced by `***`.
    static func redact(_ text: String, secrets: [String]) -> String {
        secrets.filter { !$0.isEmpty }.reduce(text) { $0.replacingOccurrences(of: $1, with: "***") }
    }
}
