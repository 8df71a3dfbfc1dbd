public import CodexCore
public import Foundation

extension SQLiteRuntimeStateStore: TurnJournaling {
    /// Appends `entry` as number `sequence` of `turn`'s journal in one transaction, durable when it returns
    /// (`synchronous=FULL`). The same entry again under its number writes nothing.
    /// - Throws: ``SQLiteStoreError`` `thread_not_found`; `sqlite_constraint` (a conflict) for another
    ///   entry under a taken number, or a gap.
    public func appendJournal(_ entry: TurnJournalEntry, sequence: Int, turn: AgentTurnID, thread: AgentThreadID) async throws {
        let body: [UInt8]
        do { body = try entry.encoded() } catch { throw SQLiteStoreError(code: .failure, message: "a journal entry could not be encoded") }
        try await database.write { connection throws(SQLiteStoreError) in
            try Self.requireThread(thread, connection: connection)
            var count: Int64 = 0
            var stored: [UInt8]?
            try connection.run("SELECT COUNT(*) FROM turn_journal WHERE turn_id = ?", [.text(turn.rawValue)]) { row throws(SQLiteStoreError) in count = row.integer(0) }
            try connection.run(
                "SELECT body FROM turn_journal WHERE turn_id = ? AND sequence = ?", [.text(turn.rawValue), .integer(Int64(sequence))]
            ) { row throws(SQLiteStoreError) in stored = row.blob(0) }
            if let stored {
                guard stored == body else {
                    throw SQLiteStoreError(code: .constraint, message: "journal entry \(sequence) of the turn is already another entry", table: "turn_journal")
                }
                return
            }
            guard Int64(sequence) == count else {
                throw SQLiteStoreError(code: .constraint, message: "journal entry \(sequence) would leave a gap after \(count) entries", table: "turn_journal")
            }
            try connection.run(
                "INSERT INTO turn_journal(turn_id, sequence, thread_id, body) VALUES (?, ?, ?, ?)",
                [.text(turn.rawValue), .integer(Int64(sequence)), .text(thread.rawValue), .blob(body)]
            )
        }
    }

    /// `turn`'s journal, in order.
    /// - Throws: ``SQLiteStoreError`` `sqlite_row_undecodable` naming the entry for a row it cannot read.
    public func journal(of turn: AgentTurnID) async throws -> [TurnJournalEntry] {
        try await database.read { connection throws(SQLiteStoreError) in
            var entries: [TurnJournalEntry] = []
            try connection.run("SELECT sequence, body FROM turn_journal WHERE turn_id = ? ORDER BY sequence", [.text(turn.rawValue)]) { row throws(SQLiteStoreError) in
                do {
                    entries.append(try TurnJournalEntry.decode(row.blob(1)))
                } catch {
                    throw SQLiteStoreError(
                        code: .rowUndecodable, message: "a journal entry could not be decoded", table: "turn_journal", rowKey: "\(turn.rawValue)/\(row.integer(0))"
                    )
                }
            }
            return entries
        }
    }

    /// Hands `turn` to `owner` when its owner is still `expected`, in one transaction (compare and set).
    public func claimTurn(_ turn: AgentTurnID, of thread: AgentThreadID, from expected: String?, to owner: String, at date: Date) async throws -> Bool {
        try await database.write { connection throws(SQLiteStoreError) in
            var turnBody: [UInt8]?
            try connection.run("SELECT body FROM turns WHERE id = ? AND thread_id = ?", [.text(turn.rawValue), .text(thread.rawValue)]) { row throws(SQLiteStoreError) in
                turnBody = row.blob(0)
            }
            var threadBody: [UInt8]?
            try connection.run("SELECT body FROM threads WHERE id = ?", [.text(thread.rawValue)]) { row throws(SQLiteStoreError) in threadBody = row.blob(0) }
            guard let turnBody, let threadBody else { return false }
            var record = try Self.decode(AgentTurn.self, turnBody, table: "turns", key: turn.rawValue)
            guard record.ownerID == expected, record.status == .running || record.status == .waitingForApproval else { return false }
            record.ownerID = owner
            record.status = .running
            try Self.upsertTurnRow(record, body: try Self.encode(record), connection: connection)
            var stored = try Self.decodeThread(key: thread.rawValue, threadBody)
            stored.settle(.running, at: date)
            try connection.run(
                "UPDATE threads SET updated_at = ?, body = ? WHERE id = ?", [.real(date.timeIntervalSince1970), .blob(try Self.encode(stored)), .text(thread.rawValue)]
            )
            return true
        }
    }

    /// Stores an approval asked for (the same request again changes nothing).
    /// - Throws: ``SQLiteStoreError`` `thread_not_found`.
    public func saveApproval(_ approval: StoredApproval) async throws {
        let body = try Self.encode(approval)
        try await database.write { connection throws(SQLiteStoreError) in
            try Self.requireThread(approval.request.threadID, connection: connection)
            try connection.run(
                "INSERT INTO approvals(id, thread_id, requested_at, body) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO NOTHING",
                [.text(approval.id.rawValue), .text(approval.request.threadID.rawValue), .real(approval.requestedAt.timeIntervalSince1970), .blob(body)]
            )
        }
    }

    /// One approval, or `nil`.
    public func approval(_ id: AgentApprovalID) async throws -> StoredApproval? {
        try await database.read { connection throws(SQLiteStoreError) in try Self.approvalRow(id, connection: connection) }
    }

    /// The approvals of `thread` (all when `nil`), oldest first.
    public func approvals(in thread: AgentThreadID?) async throws -> [StoredApproval] {
        try await database.read { connection throws(SQLiteStoreError) in
            var approvals: [StoredApproval] = []
            let (sql, bindings): (String, [SQLiteValue]) = thread.map {
                ("SELECT id, body FROM approvals WHERE thread_id = ? ORDER BY requested_at, id", [.text($0.rawValue)])
            } ?? ("SELECT id, body FROM approvals ORDER BY requested_at, id", [])
            try connection.run(sql, bindings) { row throws(SQLiteStoreError) in
                approvals.append(try Self.decode(StoredApproval.self, row.blob(1), table: "approvals", key: row.text(0)))
            }
            return approvals
        }
    }

    /// Answers an approval once, in one transaction (see ``CodexCore/TurnJournaling``).
    /// - Throws: ``CodexCore/AgentRuntimeError`` `approval_not_found`; ``SQLiteStoreError``
    ///   `sqlite_constraint` (a conflict) for another answer or another digest.
    public func answerApproval(_ id: AgentApprovalID, decision: AgentApprovalDecision, expectedDigest: String?, at date: Date) async throws -> StoredApproval {
        let answered: StoredApproval? = try await database.write { connection throws(SQLiteStoreError) -> StoredApproval? in
            guard var approval = try Self.approvalRow(id, connection: connection) else { return nil }
            if let expectedDigest, expectedDigest != approval.digest {
                throw SQLiteStoreError(code: .constraint, message: "the approval was asked for another tool definition or other arguments", table: "approvals")
            }
            if let stored = approval.decision {
                guard stored == decision else {
                    throw SQLiteStoreError(code: .constraint, message: "the approval was already answered \(stored.rawValue)", table: "approvals")
                }
                return approval
            }
            approval.decision = decision
            approval.answeredAt = date
            try connection.run("UPDATE approvals SET body = ? WHERE id = ?", [.blob(try Self.encode(approval)), .text(id.rawValue)])
            return approval
        }
        guard let answered else { throw AgentRuntimeError(code: .approvalNotFound, message: "no such approval") }
        return answered
    }

    private static func approvalRow(_ id: AgentApprovalID, connection: SQLiteConnection) throws(SQLiteStoreError) -> StoredApproval? {
        var approval: StoredApproval?
        try connection.run("SELECT body FROM approvals WHERE id = ?", [.text(id.rawValue)]) { row throws(SQLiteStoreError) in
            approval = try Self.decode(StoredApproval.self, row.blob(0), table: "approvals", key: id.rawValue)
        }
        return approval
    }
}
