public import CodexCore
public import Foundation

/// History items prepared for insertion: each item's row, with its images split off into blobs when
/// the store keeps blob files.
struct HistoryRows {
    let rows: [(kind: String, body: [UInt8], images: [AgentImageAttachment])]
    let metadata: [[[UInt8]?]]

    init(_ items: [AgentHistoryItem], externalizingImages: Bool) throws(SQLiteStoreError) {
        rows = items.map { item -> (kind: String, body: [UInt8], images: [AgentImageAttachment]) in
            guard externalizingImages, case .message(var message) = item, !message.images.isEmpty else {
                return (item.storageKind, item.storageRow(), [])
            }
            let images = message.images
            message.images = []
            return (item.storageKind, AgentHistoryItem.message(message).storageRow(), images)
        }
        var metadata: [[[UInt8]?]] = []
        for row in rows {
            var perImage: [[UInt8]?] = []
            for image in row.images { perImage.append(try image.generationMetadata.map(SQLiteRuntimeStateStore.encode)) }
            metadata.append(perImage)
        }
        self.metadata = metadata
    }

    /// Inserts the rows after the thread's last position (inside the caller's transaction). Each image
    /// blob is durable before the row that refers to it commits.
    func insert(into thread: AgentThreadID, connection: SQLiteConnection, attachments: SQLiteAttachmentFiles?) throws(SQLiteStoreError) {
        var next: Int64 = 0
        try connection.run("SELECT COALESCE(MAX(position), 0) FROM history_items WHERE thread_id = ?", [.text(thread.rawValue)]) { row throws(SQLiteStoreError) in
            next = row.integer(0)
        }
        for (index, row) in rows.enumerated() {
            next += 1
            try connection.run(
                "INSERT INTO history_items(thread_id, position, kind, body) VALUES (?, ?, ?, ?)",
                [.text(thread.rawValue), .integer(next), .text(row.kind), .blob(row.body)]
            )
            for (ordinal, image) in row.images.enumerated() {
                let key = SQLiteAttachmentFiles.key(of: image.data)
                try attachments?.store(image.data, key: key)
                try connection.run(
                    "INSERT INTO history_images(thread_id, position, ordinal, attachment_id, mime_type, storage_key, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [.text(thread.rawValue), .integer(next), .integer(Int64(ordinal)), .text(image.id.rawValue), .text(image.mimeType), .text(key),
                     metadata[index][ordinal].map(SQLiteValue.blob) ?? .null]
                )
            }
        }
    }
}

extension SQLiteRuntimeStateStore {
    /// Records a turn's start or end in one transaction: appends `history`, inserts or replaces `turn`,
    /// and sets the thread's status and `updatedAt`. A crash leaves all of it or none.
    /// - Throws: ``SQLiteStoreError`` `thread_not_found` when the thread does not exist (nothing written).
    public func recordTurn(_ turn: AgentTurn, appending history: [AgentHistoryItem], threadStatus: AgentThreadStatus, at date: Date) async throws {
        let rows = try HistoryRows(history, externalizingImages: attachments != nil)
        let turnBody = try Self.encode(turn)
        let attachments = self.attachments
        try await database.write { connection throws(SQLiteStoreError) in
            var threadBody: [UInt8]?
            try connection.run("SELECT body FROM threads WHERE id = ?", [.text(turn.threadID.rawValue)]) { row throws(SQLiteStoreError) in
                threadBody = row.blob(0)
            }
            guard let threadBody else { throw SQLiteStoreError(code: .threadNotFound, message: "no such thread") }
            var thread = try Self.decodeThread(key: turn.threadID.rawValue, threadBody)
            try rows.insert(into: turn.threadID, connection: connection, attachments: attachments)
            try Self.upsertTurnRow(turn, body: turnBody, connection: connection)
            thread.settle(threadStatus, at: date)
            try connection.run(
                "UPDATE threads SET updated_at = ?, body = ? WHERE id = ?",
                [.real(date.timeIntervalSince1970), .blob(try Self.encode(thread)), .text(thread.id.rawValue)]
            )
        }
    }
}
