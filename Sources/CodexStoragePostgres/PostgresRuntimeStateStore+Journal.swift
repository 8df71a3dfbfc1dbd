public import CodexCore
public import Foundation

extension PostgresRuntimeStateStore {
    /// Appends `entry` as number `sequence` of `turn`'s journal, in one transaction: the same entry again
    /// writes nothing; another entry under a taken number, or a gap, is `postgres_constraint`.
    /// - Throws: ``PostgresStoreError`` `thread_not_found`, `postgres_constraint`.
    public func appendJournal(_ entry: TurnJournalEntry, sequence: Int, turn: AgentTurnID, thread: AgentThreadID) async throws {
        let body: [UInt8]
        do { body = try entry.encoded() } catch { throw PostgresStoreError(code: .failure, message: "a journal entry could not be encoded") }
        try await database.write { connection throws(PostgresStoreError) in
            try Self.lockThread(thread, connection)
            var count: Int64 = 0
            var stored: [UInt8]?
            try connection.run("SELECT COUNT(*) FROM turn_journal WHERE turn_id = $1", [.text(turn.rawValue)]) { row throws(PostgresStoreError) in count = row.integer(0) }
            try connection.run(
                "SELECT body FROM turn_journal WHERE turn_id = $1 AND sequence = $2", [.text(turn.rawValue), .integer(Int64(sequence))]
            ) { row throws(PostgresStoreError) in stored = row.bytes(0) }
            if let stored {
                guard stored == body else {
                    throw PostgresStoreError(code: .constraint, message: "journal entry \(sequence) of the turn is already another entry", table: "turn_journal")
                }
                return
            }
            guard Int64(sequence) == count else {
                throw PostgresStoreError(code: .constraint, message: "journal entry \(sequence) would leave a gap after \(count) entries", table: "turn_journal")
            }
            try connection.run(
                "INSERT INTO turn_journal(turn_id, sequence, thread_id, body) VALUES ($1, $2, $3, $4)",
                [.text(turn.rawValue), .integer(Int64(sequence)), .text(thread.rawValue), .bytes(body)]
            )
        }
    }

    /// `turn`'s journal, in order.
    public func journal(of turn: AgentTurnID) async throws -> [TurnJournalEntry] {
        try await database.read { connection throws(PostgresStoreError) in
            var entries: [TurnJournalEntry] = []
            try connection.run("SELECT sequence, body FROM turn_journal WHERE turn_id = $1 ORDER BY sequence", [.text(turn.rawValue)]) { row throws(PostgresStoreError) in
                do {
                    entries.append(try TurnJournalEntry.decode(row.bytes(1)))
                } catch {
                    throw PostgresStoreError(
                        code: .rowUndecodable, message: "a journal entry could not be decoded", table: "turn_journal", rowKey: "\(turn.rawValue)/\(row.integer(0))"
                    )
                }
            }
            return entries
        }
    }

    /// Hands `turn` to `owner` when its owner is still `expected`, in one transaction with the thread's
    /// row locked (compare and set): two replicas racing end with one owner.
    public func claimTurn(_ turn: AgentTurnID, of thread: AgentThreadID, from expected: String?, to owner: String, at date: Date) async throws -> Bool {
        try await database.write({ connection throws(PostgresStoreError) -> Bool in
            var threadBody: [UInt8]?
            try connection.run("SELECT body FROM threads WHERE id = $1 FOR UPDATE", [.text(thread.rawValue)]) { row throws(PostgresStoreError) in
                threadBody = row.bytes(0)
            }
            var turnBody: [UInt8]?
            try connection.run("SELECT body FROM turns WHERE id = $1 AND thread_id = $2", [.text(turn.rawValue), .text(thread.rawValue)]) { row throws(PostgresStoreError) in
                turnBody = row.bytes(0)
            }
            guard let turnBody, let threadBody else { return false }
            var record = try Self.decode(AgentTurn.self, turnBody, table: "turns", key: turn.rawValue)
            guard record.ownerID == expected, record.status == .running || record.status == .waitingForApproval else { return false }
            record.ownerID = owner
            record.status = .running
            try Self.upsertTurnRow(record, body: try Self.encode(record), connection)
            var stored = try Self.decodeThread(key: thread.rawValue, threadBody)
            stored.settle(.running, at: date)
            try connection.run(
                "UPDATE threads SET updated_at = $1, body = $2 WHERE id = $3",
                [.double(date.timeIntervalSince1970), .bytes(try Self.encode(stored)), .text(thread.rawValue)]
            )
            return true
        }, ifLanded: { true })
    }

    /// Stores an approval asked for (the same request again changes nothing).
    /// - Throws: ``PostgresStoreError`` `thread_not_found`.
    public func saveApproval(_ approval: StoredApproval) async throws {
        let body = try Self.encode(approval)
        try await database.write { connection throws(PostgresStoreError) in
            try Self.lockThread(approval.request.threadID, connection)
            try connection.run(
                "INSERT INTO approvals(id, thread_id, requested_at, body) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING",
                [.text(approval.id.rawValue), .text(approval.request.threadID.rawValue), .double(approval.requestedAt.timeIntervalSince1970), .bytes(body)]
            )
        }
    }

    /// One approval, or `nil`.
    public func approval(_ id: AgentApprovalID) async throws -> StoredApproval? {
        try await database.read { connection throws(PostgresStoreError) in try Self.approvalRow(id, lock: false, connection) }
    }

    /// The approvals of `thread` (all when `nil`), oldest first.
    public func approvals(in thread: AgentThreadID?) async throws -> [StoredApproval] {
        try await database.read { connection throws(PostgresStoreError) in
            var approvals: [StoredApproval] = []
            let (sql, parameters): (String, [PostgresValue]) = thread.map {
                ("SELECT id, body FROM approvals WHERE thread_id = $1 ORDER BY requested_at, id", [.text($0.rawValue)])
            } ?? ("SELECT id, body FROM approvals ORDER BY requested_at, id", [])
            try connection.run(sql, parameters) { row throws(PostgresStoreError) in
                approvals.append(try Self.decode(StoredApproval.self, row.bytes(1), table: "approvals", key: row.text(0)))
            }
            return approvals
        }
    }

    /// Answers an approval once, in one transaction with its row locked (see ``CodexCore/TurnJournaling``).
    /// - Throws: ``CodexCore/AgentRuntimeError`` `approval_not_found`; ``PostgresStoreError``
    ///   `postgres_constraint` (a conflict) for another answer or another digest.
    public func answerApproval(_ id: AgentApprovalID, decision: AgentApprovalDecision, expectedDigest: String?, at date: Date) async throws -> StoredApproval {
        let answered: StoredApproval? = try await database.write({ connection throws(PostgresStoreError) -> StoredApproval? in
            guard var approval = try Self.approvalRow(id, lock: true, connection) else { return nil }
            if let expectedDigest, expectedDigest != approval.digest {
                throw PostgresStoreError(code: .constraint, message: "the approval was asked for another tool definition or other arguments", table: "approvals")
            }
            if let stored = approval.decision {
                guard stored == decision else {
                    throw PostgresStoreError(code: .constraint, message: "the approval was already answered \(stored.rawValue)", table: "approvals")
                }
                return approval
            }
            approval.decision = decision
            approval.answeredAt = date
            try connection.run("UPDATE approvals SET body = $1 WHERE id = $2", [.bytes(try Self.encode(approval)), .text(id.rawValue)])
            return approval
        }, ifLanded: { () async throws(PostgresStoreError) -> StoredApproval? in
            try await self.database.read { connection throws(PostgresStoreError) in try Self.approvalRow(id, lock: false, connection) }
        })
        guard let answered else { throw AgentRuntimeError(code: .approvalNotFound, message: "no such approval") }
        return answered
    }

    private static func approvalRow(_ id: AgentApprovalID, lock: Bool, _ connection: PostgresConnection) throws(PostgresStoreError) -> StoredApproval? {
        var approval: StoredApproval?
        try connection.run("SELECT body FROM approvals WHERE id = $1" + (lock ? " FOR UPDATE" : ""), [.text(id.rawValue)]) { row throws(PostgresStoreError) in
            approval = try Self.decode(StoredApproval.self, row.bytes(0), table: "approvals", key: id.rawValue)
        }
        return approval
    }
}
