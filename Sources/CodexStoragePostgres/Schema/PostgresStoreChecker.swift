public import CodexCore
import Foundation

/// What ``PostgresRuntimeStateStore/check()`` found.
public struct PostgresStoreCheckReport: Sendable, Hashable, Codable {
    /// One thing the check found wrong (the same type for every store).
    public typealias Problem = StateStoreCheckProblem

    /// The number of migrations applied.
    public var schemaVersion: Int
    /// The server's version number.
    public var serverVersion: Int
    /// The rows decoded and checked.
    public var rowsChecked: Int
    /// The first problems found, in table order (at most 100; ``problemCount`` counts them all).
    public var problems: [Problem]
    /// How many problems were found.
    public var problemCount: Int

    /// Whether nothing was found wrong.
    public var isHealthy: Bool { problemCount == 0 }
}

extension PostgresRuntimeStateStore {
    /// Checks the store without changing anything (it works on a store opened with
    /// ``init(readingFrom:schema:)``): every migration recorded, every expected table with its columns,
    /// every row decoded and checked against its key, and every image's blob present with the bytes its
    /// key names. Rows are read in pages of 500, so memory does not grow with the store; each page is
    /// its own snapshot.
    public func check() async throws -> PostgresStoreCheckReport {
        let schema = self.schema
        let tables = try await database.read { connection throws(PostgresStoreError) -> (Int, Int, [PostgresStoreCheckReport.Problem], Set<String>) in
            var problems: [PostgresStoreCheckReport.Problem] = []
            let recorded = try PostgresMigrator.recorded(connection, schema: schema)
            for migration in PostgresStateSchema.migrations.dropFirst(recorded.count) {
                problems.append(.init(table: "codex_migrations", message: "migration \(migration.position) (\(migration.name)) is not recorded"))
            }
            var present: Set<String> = []
            for (table, expected) in PostgresStateSchema.expectedColumns {
                var found: [String] = []
                try connection.run(
                    "SELECT column_name::text FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position",
                    [.text(schema), .text(table)]
                ) { row throws(PostgresStoreError) in found.append(row.text(0) ?? "") }
                if found.isEmpty {
                    problems.append(.init(table: table, message: "the table is missing"))
                } else if found != expected {
                    problems.append(.init(table: table, message: "expected the columns \(expected.joined(separator: ", ")); found \(found.joined(separator: ", "))"))
                } else {
                    present.insert(table)
                }
            }
            return (recorded.count, connection.serverVersion, problems, present)
        }
        var checker = PostgresStoreChecker(database: database, problems: tables.2)
        if tables.3.contains("threads") { try await checker.checkThreads() }
        if tables.3.contains("history_items") { try await checker.checkHistory() }
        if tables.3.contains("turns") { try await checker.checkTurns() }
        if tables.3.contains("history_images") { try await checker.checkImages() }
        if tables.3.contains("turn_journal") { try await checker.checkJournal() }
        if tables.3.contains("approvals") { try await checker.checkApprovals() }
        if tables.3.contains("usage_records") { try await checker.checkUsage() }
        return PostgresStoreCheckReport(
            schemaVersion: tables.0, serverVersion: tables.1, rowsChecked: checker.rowsChecked,
            problems: Array(checker.problems.prefix(100)), problemCount: checker.problems.count
        )
    }
}

/// The row checks behind ``PostgresRuntimeStateStore/check()``: each table read in key order, a page at
/// a time.
struct PostgresStoreChecker {
    let database: PostgresDatabase
    var problems: [PostgresStoreCheckReport.Problem]
    var rowsChecked = 0
    static let page = 500

    /// Reads `table` a page at a time in the order of its text key column `key` (a composite key is
    /// paged by its text expression), asking `verdict` about each row.
    private mutating func scan(
        _ table: String, key: String, columns: String, _ verdict: @escaping @Sendable (PostgresRow) -> (key: String, problem: String?)
    ) async throws {
        var after = ""
        while true {
            let sql = "SELECT \(key), \(columns) FROM \(table) WHERE \(key) > $1 ORDER BY \(key) LIMIT \(Self.page)"
            let start = after
            let page = try await database.read { connection throws(PostgresStoreError) -> (last: String?, count: Int, bad: [(String, String)]) in
                var last: String?
                var count = 0
                var bad: [(String, String)] = []
                try connection.run(sql, [.text(start)]) { row throws(PostgresStoreError) in
                    count += 1
                    last = row.text(0)
                    let (key, problem) = verdict(row)
                    if let problem { bad.append((key, problem)) }
                }
                return (last, count, bad)
            }
            rowsChecked += page.count
            problems += page.bad.map { .init(table: table, rowKey: $0.0, message: $0.1) }
            guard page.count == Self.page, let last = page.last else { return }
            after = last
        }
    }

    mutating func checkThreads() async throws {
        try await scan("threads", key: "id", columns: "body") { row in
            let key = row.text(0) ?? ""
            do throws(PostgresStoreError) {
                _ = try PostgresRuntimeStateStore.decodeThread(key: key, row.bytes(1))
                return (key, nil)
            } catch {
                return (key, error.message)
            }
        }
    }

    mutating func checkHistory() async throws {
        // Keyed by thread and zero-padded position, so text order is key order.
        try await scan("history_items", key: "(thread_id || '/' || lpad(position::text, 19, '0'))", columns: "thread_id, position, kind, body") { row in
            let thread = row.text(1) ?? ""
            let key = "\(thread)/\(row.integer(2))"
            guard let item = try? AgentHistoryItem(storageRow: row.bytes(4)) else { return (key, "a stored history item could not be decoded") }
            if item.storageKind != row.text(3) { return (key, "the row's kind disagrees with its body") }
            if case .message(let message) = item, message.threadID.rawValue != thread { return (key, "a message row's body names another thread") }
            return (key, nil)
        }
    }

    mutating func checkTurns() async throws {
        try await scan("turns", key: "id", columns: "thread_id, body") { row in
            let key = row.text(0) ?? ""
            guard let turn = try? StoredDate.decoder().decode(AgentTurn.self, from: Data(row.bytes(2))) else { return (key, "a stored AgentTurn could not be decoded") }
            if turn.id.rawValue != key { return (key, "a turn row's body names another turn") }
            if turn.threadID.rawValue != row.text(1) { return (key, "a turn row's body names another thread than its thread_id") }
            return (key, nil)
        }
    }

    mutating func checkImages() async throws {
        let database = self.database
        var keys: [String] = []
        try await scan(
            "history_images", key: "(thread_id || '/' || lpad(position::text, 19, '0') || '/' || lpad(ordinal::text, 10, '0'))",
            columns: "storage_key, metadata"
        ) { row in
            let key = row.text(0) ?? ""
            if !row.isNull(2), (try? StoredDate.decoder().decode(AgentImageAttachment.GenerationMetadata.self, from: Data(row.bytes(2)))) == nil {
                return (key, "the image's generation metadata could not be decoded")
            }
            return (key, nil)
        }
        // Each blob once: its size and its bytes against its key.
        var after = ""
        repeat {
            let start = after
            let page = try await database.read { connection throws(PostgresStoreError) -> [String] in
                var page: [String] = []
                try connection.run("SELECT key FROM blobs WHERE key > $1 ORDER BY key LIMIT \(Self.page)", [.text(start)]) { row throws(PostgresStoreError) in
                    page.append(row.text(0) ?? "")
                }
                return page
            }
            keys = page
            for key in page {
                rowsChecked += 1
                if let problem = try await Self.blobProblem(key, database) { problems.append(.init(table: "blobs", rowKey: key, message: problem)) }
            }
            after = page.last ?? after
        } while keys.count == Self.page
    }

    /// What is wrong with a blob (missing chunks, bytes that do not match its key), or `nil`.
    private static func blobProblem(_ key: String, _ database: PostgresDatabase) async throws -> String? {
        let outcome: Result<Data, PostgresStoreError> = try await database.read { connection throws(PostgresStoreError) in
            do throws(PostgresStoreError) {
                return .success(try PostgresRuntimeStateStore.loadBlob(key, connection))
            } catch {
                guard error.code == .rowUndecodable else { throw error }
                return .failure(error)
            }
        }
        if case .failure(let error) = outcome { return error.message }
        return nil
    }

    mutating func checkJournal() async throws {
        try await scan("turn_journal", key: "(turn_id || '/' || lpad(sequence::text, 10, '0'))", columns: "turn_id, sequence, body") { row in
            let key = "\(row.text(1) ?? "")/\(row.integer(2))"
            return (key, (try? TurnJournalEntry.decode(row.bytes(3))) == nil ? "a journal entry could not be decoded" : nil)
        }
    }

    mutating func checkApprovals() async throws {
        try await scan("approvals", key: "id", columns: "thread_id, body") { row in
            let key = row.text(0) ?? ""
            guard let approval = try? StoredDate.decoder().decode(StoredApproval.self, from: Data(row.bytes(2))) else { return (key, "a stored approval could not be decoded") }
            if approval.id.rawValue != key { return (key, "an approval row's body names another approval") }
            if approval.request.threadID.rawValue != row.text(1) { return (key, "an approval row's body names another thread than its thread_id") }
            return (key, nil)
        }
    }

    mutating func checkUsage() async throws {
        try await scan(
            "usage_records", key: "(turn_id || '/' || lpad(sequence::text, 19, '0'))",
            columns: "turn_id, sequence, thread_id, body, account_binding, model, recorded_at"
        ) { row in
            let key = "\(row.text(1) ?? "")/\(row.integer(2))"
            do throws(PostgresStoreError) {
                let record = try PostgresRuntimeStateStore.decodeUsage(turn: row.text(1) ?? "", sequence: row.integer(2), thread: row.text(3) ?? "", row.bytes(4))
                // The filter columns must say what the body says, or a query would miss the record.
                guard record.accountBinding == (row.isNull(5) ? nil : row.text(5)), record.model == row.text(6),
                      record.recordedAt.timeIntervalSince1970 == row.double(7) else {
                    return (key, "a usage row's account, model or date column disagrees with its body")
                }
                return (key, nil)
            } catch {
                return (key, error.message)
            }
        }
    }
}
