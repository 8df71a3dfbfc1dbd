public import CodexCore
import Foundation

/// What ``SQLiteRuntimeStateStore/check(_:)`` found.
public struct SQLiteStoreCheckReport: Sendable, Hashable, Codable {
    /// One thing the check found wrong (the same type for every store).
    public typealias Problem = StateStoreCheckProblem

    /// The lines of `PRAGMA integrity_check` (`["ok"]` for a healthy file).
    public var integrity: [String]
    /// The number of migrations applied.
    public var schemaVersion: Int
    /// Whether the tables, columns and rows were examined (``SQLiteRuntimeStateStore/CheckDepth/full``).
    public var isDeep: Bool
    /// The rows decoded and checked.
    public var rowsChecked: Int
    /// The first problems found, in table order (at most 100; ``problemCount`` counts them all).
    public var problems: [Problem]
    /// How many problems were found.
    public var problemCount: Int

    /// Whether SQLite's check said `ok` and nothing else was found.
    public var isHealthy: Bool { integrity == ["ok"] && problemCount == 0 }

    /// Creates a report.
    public init(integrity: [String], schemaVersion: Int, isDeep: Bool, rowsChecked: Int, problems: [Problem], problemCount: Int) {
        self.integrity = integrity
        self.schemaVersion = schemaVersion
        self.isDeep = isDeep
        self.rowsChecked = rowsChecked
        self.problems = problems
        self.problemCount = problemCount
    }
}

extension SQLiteRuntimeStateStore {
    /// How much ``check(_:)`` examines.
    public enum CheckDepth: Sendable, Hashable {
        /// SQLite's own `PRAGMA integrity_check` only.
        case quick
        /// That, plus: every expected table with its columns, every row decoded and checked against its
        /// key, foreign keys, and every image blob present with the bytes its key names.
        case full
    }

    /// Checks the store without changing it (it works on a store opened with ``init(readingAt:)``).
    /// Rows are read one at a time, so memory does not grow with the store.
    /// - Returns: The report; ``SQLiteStoreCheckReport/isHealthy`` when nothing is wrong.
    /// - Throws: ``SQLiteStoreError`` when the file cannot be read at all.
    public func check(_ depth: CheckDepth = .full) async throws -> SQLiteStoreCheckReport {
        let attachments = self.attachments
        return try await database.read { connection throws(SQLiteStoreError) in
            var checker = SQLiteStoreChecker(connection: connection, attachments: attachments)
            return try checker.run(deep: depth == .full)
        }
    }
}

/// The work behind ``SQLiteRuntimeStateStore/check(_:)``, inside one read transaction.
struct SQLiteStoreChecker {
    let connection: SQLiteConnection
    let attachments: SQLiteAttachmentFiles?
    private var problems: [SQLiteStoreCheckReport.Problem] = []
    private var problemCount = 0
    private var rowsChecked = 0
    private static let maximumReported = 100

    init(connection: SQLiteConnection, attachments: SQLiteAttachmentFiles?) {
        self.connection = connection
        self.attachments = attachments
    }

    /// `PRAGMA integrity_check`'s lines.
    static func integrity(_ connection: SQLiteConnection) throws(SQLiteStoreError) -> [String] {
        var lines: [String] = []
        try connection.run("PRAGMA integrity_check") { row throws(SQLiteStoreError) in lines.append(row.text(0) ?? "") }
        return lines
    }

    mutating func run(deep: Bool) throws(SQLiteStoreError) -> SQLiteStoreCheckReport {
        let integrity = try Self.integrity(connection)
        let applied = try SQLiteMigrator.recorded(connection, SQLiteStateSchema.schema)
        if deep {
            for migration in SQLiteStateSchema.schema.migrations where applied[migration.position] != migration.name {
                note("codex_migrations", nil, "migration \(migration.position) (\(migration.name)) is not recorded")
            }
            var present: Set<String> = []
            for (table, columns) in SQLiteStateSchema.expectedColumns where try checkColumns(table, columns) { present.insert(table) }
            if present.contains("threads") { try checkThreads() }
            if present.contains("history_items") { try checkHistory() }
            if present.contains("turns") { try checkTurns() }
            if present.contains("history_images") { try checkImages() }
            if present.contains("usage_records") { try checkUsage() }
            if present.contains("turn_journal") { try checkJournal() }
            if present.contains("approvals") { try checkApprovals() }
            try checkForeignKeys()
        }
        return SQLiteStoreCheckReport(
            integrity: integrity, schemaVersion: applied.count, isDeep: deep, rowsChecked: rowsChecked, problems: problems, problemCount: problemCount
        )
    }

    private mutating func note(_ table: String, _ key: String?, _ message: String) {
        problemCount += 1
        if problems.count < Self.maximumReported { problems.append(.init(table: table, rowKey: key, message: message)) }
    }

    /// Whether the table exists with exactly the expected columns (a problem is noted otherwise).
    private mutating func checkColumns(_ table: String, _ expected: [String]) throws(SQLiteStoreError) -> Bool {
        var found: [String] = []
        try connection.run("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(table)]) { row throws(SQLiteStoreError) in
            found.append(row.text(0) ?? "")
        }
        if found.isEmpty {
            note(table, nil, "the table is missing")
            return false
        }
        guard found == expected else {
            note(table, nil, "expected the columns \(expected.joined(separator: ", ")); found \(found.joined(separator: ", "))")
            return false
        }
        return true
    }

    /// Runs `sql` and asks `verdict` about each row: its key, and what is wrong with it or `nil`. Rows
    /// are read one at a time; every row counts as checked and every problem is noted.
    private mutating func checkRows(
        _ table: String, _ sql: String, _ verdict: @escaping (SQLiteRow) -> (key: String, problem: String?)
    ) throws(SQLiteStoreError) {
        var bad: [(String, String)] = []
        var count = 0
        try connection.run(sql) { row throws(SQLiteStoreError) in
            count += 1
            let (key, problem) = verdict(row)
            if let problem { bad.append((key, problem)) }
        }
        rowsChecked += count
        for (key, message) in bad { note(table, key, message) }
    }

    private mutating func checkThreads() throws(SQLiteStoreError) {
        try checkRows("threads", "SELECT id, body FROM threads ORDER BY id") { row in
            let key = row.text(0) ?? ""
            do throws(SQLiteStoreError) {
                _ = try SQLiteRuntimeStateStore.decodeThread(key: key, row.blob(1))
                return (key, nil)
            } catch {
                return (key, error.message)
            }
        }
    }

    private mutating func checkHistory() throws(SQLiteStoreError) {
        try checkRows(
            "history_items", "SELECT thread_id, position, kind, body, typeof(position) = 'integer' AND position > 0 FROM history_items ORDER BY thread_id, position"
        ) { row in
            let thread = row.text(0) ?? ""
            // Reading starts after position 0 and steps by whole numbers: any other position is an item
            // no reader returns (or one a reader cannot step past).
            guard row.integer(4) == 1 else { return ("\(thread)/\(row.text(1) ?? "")", "a history row's position is not a whole number above 0") }
            let key = "\(thread)/\(row.integer(1))"
            guard let item = try? AgentHistoryItem(storageRow: row.blob(3)) else { return (key, "a stored history item could not be decoded") }
            if item.storageKind != row.text(2) { return (key, "the row's kind disagrees with its body") }
            if case .message(let message) = item, message.threadID.rawValue != thread { return (key, "a message row's body names another thread") }
            return (key, nil)
        }
    }

    private mutating func checkTurns() throws(SQLiteStoreError) {
        try checkRows("turns", "SELECT id, thread_id, body FROM turns ORDER BY id") { row in
            let key = row.text(0) ?? ""
            guard let turn = try? StoredDate.decoder().decode(AgentTurn.self, from: Data(row.blob(2))) else { return (key, "a stored AgentTurn could not be decoded") }
            if turn.id.rawValue != key { return (key, "a turn row's body names another turn") }
            if turn.threadID.rawValue != row.text(1) { return (key, "a turn row's body names another thread than its thread_id") }
            return (key, nil)
        }
    }

    private mutating func checkUsage() throws(SQLiteStoreError) {
        try checkRows(
            "usage_records", "SELECT turn_id, sequence, thread_id, body, account_binding, model, recorded_at FROM usage_records ORDER BY turn_id, sequence"
        ) { row in
            let key = "\(row.text(0) ?? "")/\(row.integer(1))"
            do throws(SQLiteStoreError) {
                let record = try SQLiteRuntimeStateStore.decodeUsage(turn: row.text(0) ?? "", sequence: row.integer(1), thread: row.text(2) ?? "", row.blob(3))
                // The filter columns must say what the body says, or a query would miss the record.
                guard record.accountBinding == (row.isNull(4) ? nil : row.text(4)), record.model == row.text(5),
                      record.recordedAt.timeIntervalSince1970 == row.real(6) else {
                    return (key, "a usage row's account, model or date column disagrees with its body")
                }
                return (key, nil)
            } catch {
                return (key, error.message)
            }
        }
    }

    private mutating func checkJournal() throws(SQLiteStoreError) {
        try checkRows("turn_journal", "SELECT turn_id, sequence, body FROM turn_journal ORDER BY turn_id, sequence") { row in
            let key = "\(row.text(0) ?? "")/\(row.integer(1))"
            return (key, (try? TurnJournalEntry.decode(row.blob(2))) == nil ? "a journal entry could not be decoded" : nil)
        }
    }

    private mutating func checkApprovals() throws(SQLiteStoreError) {
        try checkRows("approvals", "SELECT id, thread_id, body FROM approvals ORDER BY id") { row in
            let key = row.text(0) ?? ""
            guard let approval = try? StoredDate.decoder().decode(StoredApproval.self, from: Data(row.blob(2))) else {
                return (key, "a stored approval could not be decoded")
            }
            if approval.id.rawValue != key { return (key, "an approval row's body names another approval") }
            if approval.request.threadID.rawValue != row.text(1) { return (key, "an approval row's body names another thread than its thread_id") }
            return (key, nil)
        }
    }

    private mutating func checkImages() throws(SQLiteStoreError) {
        let attachments = self.attachments
        try checkRows(
            "history_images", "SELECT thread_id, position, ordinal, storage_key, metadata FROM history_images ORDER BY thread_id, position, ordinal"
        ) { row in
            let key = "\(row.text(0) ?? "")/\(row.integer(1))/\(row.integer(2))"
            if !row.isNull(4), (try? StoredDate.decoder().decode(AgentImageAttachment.GenerationMetadata.self, from: Data(row.blob(4)))) == nil {
                return (key, "the image's generation metadata could not be decoded")
            }
            // In-memory stores keep images inside the rows; file stores keep content-addressed blobs.
            guard let attachments else { return (key, nil) }
            let storageKey = row.text(3) ?? ""
            guard let data = try? attachments.load(storageKey) else { return (key, "the image's blob file is missing or unreadable") }
            if SQLiteAttachmentFiles.key(of: data) != storageKey { return (key, "the image's blob file does not hold the bytes its key names") }
            return (key, nil)
        }
    }

    private mutating func checkForeignKeys() throws(SQLiteStoreError) {
        var bad: [(table: String, rowID: Int64?, parent: String, constraint: Int64)] = []
        try connection.run("PRAGMA foreign_key_check") { row throws(SQLiteStoreError) in
            bad.append((row.text(0) ?? "", row.isNull(1) ? nil : row.integer(1), row.text(2) ?? "", row.integer(3)))
        }
        // A table without row IDs (history, journal, usage, image references) reports no row ID: its
        // orphans are named by their primary key instead, found once per table and constraint.
        var keyed: Set<String> = []
        for entry in bad {
            if let rowID = entry.rowID {
                note(entry.table, "rowid \(rowID)", "the row refers to a missing \(entry.parent) row")
            } else if keyed.insert("\(entry.table)\u{0}\(entry.constraint)").inserted {
                // SQLite found a violation: it is reported even when the key query finds no row to name.
                let keys = try orphanKeys(entry.table, parent: entry.parent, constraint: entry.constraint)
                for key in keys.isEmpty ? ["(no key)"] : keys {
                    note(entry.table, key, "the row refers to a missing \(entry.parent) row")
                }
            }
        }
    }

    /// The primary keys (`a/b`) of `table`'s rows whose foreign key `constraint` names no `parent` row.
    private func orphanKeys(_ table: String, parent: String, constraint: Int64) throws(SQLiteStoreError) -> [String] {
        func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        var pairs: [(from: String, to: String)] = []
        try connection.run("SELECT \"from\", \"to\" FROM pragma_foreign_key_list(?) WHERE id = ? ORDER BY seq", [.text(table), .integer(constraint)]) {
            row throws(SQLiteStoreError) in
            pairs.append((row.text(0) ?? "", row.text(1) ?? ""))
        }
        var keyColumns: [String] = []
        try connection.run("SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk", [.text(table)]) { row throws(SQLiteStoreError) in
            keyColumns.append(row.text(0) ?? "")
        }
        // A constraint on the parent's implicit key, or a table without a declared key: no key to name.
        guard !pairs.isEmpty, !keyColumns.isEmpty, !pairs.contains(where: { $0.to.isEmpty }) else { return ["(no key)"] }
        let matches = pairs.map { "p.\(quoted($0.to)) = c.\(quoted($0.from))" }.joined(separator: " AND ")
        let present = pairs.map { "c.\(quoted($0.from)) IS NOT NULL" }.joined(separator: " AND ")
        let sql = "SELECT \(keyColumns.map { "c.\(quoted($0))" }.joined(separator: ", ")) FROM \(quoted(table)) AS c WHERE \(present)"
            + " AND NOT EXISTS (SELECT 1 FROM \(quoted(parent)) AS p WHERE \(matches))"
        var keys: [String] = []
        try connection.run(sql) { row throws(SQLiteStoreError) in
            keys.append((0..<Int32(keyColumns.count)).map { row.text($0) ?? "" }.joined(separator: "/"))
        }
        return keys
    }
}
