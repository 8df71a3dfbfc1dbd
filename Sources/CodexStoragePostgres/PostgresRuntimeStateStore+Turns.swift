public import CodexCore
public import Foundation

/// History items prepared for insertion: each item's row in the binary storage form, with its images
/// split off into content-addressed blobs.
struct PostgresHistoryRows: Sendable {
    struct Row: Sendable {
        let kind: String
        let body: [UInt8]
        let images: [AgentImageAttachment]
        let metadata: [[UInt8]?]
    }

    let rows: [Row]

    init(_ items: [AgentHistoryItem]) throws(PostgresStoreError) {
        var rows: [Row] = []
        for item in items {
            guard case .message(var message) = item, !message.images.isEmpty else {
                rows.append(Row(kind: item.storageKind, body: item.storageRow(), images: [], metadata: []))
                continue
            }
            let images = message.images
            message.images = []
            var metadata: [[UInt8]?] = []
            for image in images { metadata.append(try image.generationMetadata.map(PostgresRuntimeStateStore.encode)) }
            rows.append(Row(kind: item.storageKind, body: AgentHistoryItem.message(message).storageRow(), images: images, metadata: metadata))
        }
        self.rows = rows
    }

    /// Inserts the rows after the thread's last item (inside the caller's transaction). The thread's row
    /// is locked first, so appends to one thread take turns and commit in the order of their positions
    /// (taken from one sequence, increasing, never reused); rows without images are queued to travel with
    /// the commit in one round trip.
    /// - Throws: ``PostgresStoreError`` `thread_not_found` when the thread does not exist.
    func insert(into thread: AgentThreadID, connection: PostgresConnection) throws(PostgresStoreError) {
        let lock = "SELECT 1 FROM threads WHERE id = $1 FOR UPDATE"
        let insert = "INSERT INTO history_items(thread_id, kind, body) VALUES ($1, $2, $3)"
        if !rows.isEmpty, rows.allSatisfy(\.images.isEmpty) {
            // Nothing here needs a reply: the lock and the inserts travel with the commit, so a write is one
            // round trip. A missing thread fails the inserts' foreign key (see `missingThread`).
            connection.enqueue(lock, [.text(thread.rawValue)])
            for row in rows { connection.enqueue(insert, [.text(thread.rawValue), .text(row.kind), .bytes(row.body)]) }
            return
        }
        var exists = false
        try connection.run(lock, [.text(thread.rawValue)]) { _ throws(PostgresStoreError) in exists = true }
        guard exists else { throw PostgresStoreError(code: .threadNotFound, message: "no such thread") }
        for row in rows {
            guard !row.images.isEmpty else {
                connection.enqueue(insert, [.text(thread.rawValue), .text(row.kind), .bytes(row.body)])
                continue
            }
            var position: Int64 = 0
            try connection.run(insert + " RETURNING position", [.text(thread.rawValue), .text(row.kind), .bytes(row.body)]) { result throws(PostgresStoreError) in
                position = result.integer(0)
            }
            let next = position
            for (ordinal, image) in row.images.enumerated() {
                let key = SHA256.hexDigest(of: image.data)
                try PostgresRuntimeStateStore.storeBlob(image.data, key: key, connection)
                try connection.run(
                    "INSERT INTO history_images(thread_id, position, ordinal, attachment_id, mime_type, storage_key, metadata) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    [.text(thread.rawValue), .integer(next), .integer(Int64(ordinal)), .text(image.id.rawValue), .text(image.mimeType), .text(key),
                     row.metadata[ordinal].map(PostgresValue.bytes) ?? .null]
                )
            }
        }
    }
}

extension PostgresStoreError {
    /// A history insert refused because its thread does not exist (the foreign key of `history_items`),
    /// as ``PostgresHistoryRows/insert(into:connection:)`` reports a missing thread when its inserts
    /// travel with the commit: `thread_not_found`.
    var missingThread: PostgresStoreError {
        guard code == .constraint, sqlState == "23503", table == "history_items" else { return self }
        return PostgresStoreError(code: .threadNotFound, message: "no such thread")
    }
}

extension PostgresRuntimeStateStore {
    // MARK: - Turns

    /// Inserts or replaces a turn record.
    /// - Throws: ``PostgresStoreError`` `thread_not_found` when its thread does not exist (nothing written).
    public func upsertTurn(_ turn: AgentTurn) async throws {
        let body = try Self.encode(turn)
        try await database.write { connection throws(PostgresStoreError) in
            try Self.lockThread(turn.threadID, connection)
            try Self.upsertTurnRow(turn, body: body, connection)
        }
    }

    /// The most recent turn of a thread, or `nil`.
    public func latestTurn(of thread: AgentThreadID) async throws -> AgentTurn? {
        try await database.read { connection throws(PostgresStoreError) in try Self.latestTurnRow(of: thread, except: nil, connection) }
    }

    /// Records a turn's start or end in one transaction: appends `history`, inserts or replaces `turn`,
    /// and sets the thread's status and `updatedAt`.
    ///
    /// A start (`turn` running) is refused with ``CodexCore/AgentRuntimeError`` `thread_busy` when the
    /// thread's latest other turn is still running or waiting for an approval: with the thread's row
    /// locked, two replicas starting a turn on one thread at the same instant end with exactly one
    /// started.
    /// - Throws: ``PostgresStoreError`` `thread_not_found` (nothing written).
    public func recordTurn(_ turn: AgentTurn, appending history: [AgentHistoryItem], threadStatus: AgentThreadStatus, at date: Date) async throws {
        let rows = try PostgresHistoryRows(history)
        let turnBody = try Self.encode(turn)
        let busy: Bool = try await database.write({ connection throws(PostgresStoreError) -> Bool in
            var threadBody: [UInt8]?
            try connection.run("SELECT body FROM threads WHERE id = $1 FOR UPDATE", [.text(turn.threadID.rawValue)]) { row throws(PostgresStoreError) in
                threadBody = row.bytes(0)
            }
            guard let threadBody else { throw PostgresStoreError(code: .threadNotFound, message: "no such thread") }
            if turn.status == .running, let other = try Self.latestTurnRow(of: turn.threadID, except: turn.id, connection),
               other.status == .running || other.status == .waitingForApproval {
                return true
            }
            var thread = try Self.decodeThread(key: turn.threadID.rawValue, threadBody)
            try rows.insert(into: turn.threadID, connection: connection)
            try Self.upsertTurnRow(turn, body: turnBody, connection)
            thread.settle(threadStatus, at: date)
            try connection.run(
                "UPDATE threads SET updated_at = $1, body = $2 WHERE id = $3",
                [.double(date.timeIntervalSince1970), .bytes(try Self.encode(thread)), .text(thread.id.rawValue)]
            )
            return false
        }, ifLanded: { false })
        if busy { throw AgentRuntimeError(code: .threadBusy, message: "another runtime started a turn on the thread first") }
    }

    /// Inserts or replaces a turn's row (inside the caller's transaction).
    static func upsertTurnRow(_ turn: AgentTurn, body: [UInt8], _ connection: PostgresConnection) throws(PostgresStoreError) {
        try connection.run(
            "INSERT INTO turns(id, thread_id, started_at, body) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO UPDATE SET started_at = excluded.started_at, body = excluded.body",
            [.text(turn.id.rawValue), .text(turn.threadID.rawValue), .double(turn.startedAt.timeIntervalSince1970), .bytes(body)]
        )
    }

    /// The thread's most recent turn other than `except`.
    static func latestTurnRow(of thread: AgentThreadID, except: AgentTurnID?, _ connection: PostgresConnection) throws(PostgresStoreError) -> AgentTurn? {
        var turn: AgentTurn?
        try connection.run(
            "SELECT id, body FROM turns WHERE thread_id = $1 AND id <> $2 ORDER BY started_at DESC, seq DESC LIMIT 1",
            [.text(thread.rawValue), .text(except?.rawValue ?? "")]
        ) { row throws(PostgresStoreError) in
            turn = try Self.decode(AgentTurn.self, row.bytes(1), table: "turns", key: row.text(0))
        }
        return turn
    }

    // MARK: - Image blobs

    /// Stores `data` under its key unless it is there, in chunks of at most ``blobChunkBytes``.
    static func storeBlob(_ data: Data, key: String, _ connection: PostgresConnection) throws(PostgresStoreError) {
        var created = false
        try connection.run(
            "INSERT INTO blobs(key, size) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING key", [.text(key), .integer(Int64(data.count))]
        ) { _ throws(PostgresStoreError) in created = true }
        guard created else { return }
        var offset = 0
        var ordinal: Int64 = 0
        repeat {
            let end = min(data.count, offset + blobChunkBytes)
            let chunk = [UInt8](data[data.startIndex + offset..<data.startIndex + end])
            try connection.run("INSERT INTO blob_chunks(key, ordinal, data) VALUES ($1, $2, $3)", [.text(key), .integer(ordinal), .bytes(chunk)])
            offset = end
            ordinal += 1
        } while offset < data.count
    }

    /// A blob's bytes, read chunk by chunk.
    static func loadBlob(_ key: String, _ connection: PostgresConnection) throws(PostgresStoreError) -> Data {
        var data = Data()
        var size: Int64 = -1
        try connection.run("SELECT size FROM blobs WHERE key = $1", [.text(key)]) { row throws(PostgresStoreError) in size = row.integer(0) }
        guard size >= 0 else { throw PostgresStoreError(code: .rowUndecodable, message: "an image's blob is missing", table: "blobs", rowKey: key) }
        // No image the store wrote is larger: a bigger recorded size is damage, not a reason to allocate it.
        guard size <= AgentImageAttachment.maximumByteCount else {
            throw PostgresStoreError(code: .rowUndecodable, message: "an image's blob records \(size) bytes, more than any image", table: "blobs", rowKey: key)
        }
        data.reserveCapacity(Int(size))
        try connection.run("SELECT data FROM blob_chunks WHERE key = $1 ORDER BY ordinal", [.text(key)]) { row throws(PostgresStoreError) in
            row.withBytes(0) { data.append(contentsOf: $0) }
        }
        guard Int64(data.count) == size, SHA256.hexDigest(of: data) == key else {
            throw PostgresStoreError(code: .rowUndecodable, message: "an image's blob does not match its key", table: "blobs", rowKey: key)
        }
        return data
    }

    /// Deletes a blob no image refers to any more. A reference another transaction committed meanwhile
    /// keeps it (the delete is undone to a savepoint, and the thread's deletion goes on).
    static func removeBlobIfUnreferenced(_ key: String, _ connection: PostgresConnection) throws(PostgresStoreError) {
        try connection.execute("SAVEPOINT codexkit_blob")
        do throws(PostgresStoreError) {
            try connection.run("DELETE FROM blobs WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM history_images WHERE storage_key = $1)", [.text(key)])
            try connection.execute("RELEASE SAVEPOINT codexkit_blob")
        } catch where error.code == .constraint {
            try connection.execute("ROLLBACK TO SAVEPOINT codexkit_blob")
        }
    }

    /// Puts back the images of the messages in `items` (at `positions`) from their blobs.
    static func reattachImages(
        _ items: inout [AgentHistoryItem], positions: [Int64], range: ClosedRange<Int64>, thread: AgentThreadID, _ connection: PostgresConnection
    ) throws(PostgresStoreError) {
        var references: [(position: Int64, id: String, mimeType: String, key: String, metadata: [UInt8]?)] = []
        try connection.run(
            "SELECT position, attachment_id, mime_type, storage_key, metadata FROM history_images WHERE thread_id = $1 AND position BETWEEN $2 AND $3 ORDER BY position, ordinal",
            [.text(thread.rawValue), .integer(range.lowerBound), .integer(range.upperBound)]
        ) { row throws(PostgresStoreError) in
            references.append((row.integer(0), row.text(1) ?? "", row.text(2) ?? "", row.text(3) ?? "", row.isNull(4) ? nil : row.bytes(4)))
        }
        guard !references.isEmpty else { return }
        var images: [Int64: [AgentImageAttachment]] = [:]
        for reference in references {
            let metadata = try reference.metadata.map { bytes throws(PostgresStoreError) in
                try decode(AgentImageAttachment.GenerationMetadata.self, bytes, table: "history_images")
            }
            images[reference.position, default: []].append(AgentImageAttachment(
                id: AgentAttachmentID(rawValue: reference.id), data: try loadBlob(reference.key, connection), mimeType: reference.mimeType, generationMetadata: metadata
            ))
        }
        for (index, position) in positions.enumerated() {
            if let found = images[position], case .message(var message) = items[index] {
                message.images = found
                items[index] = .message(message)
            }
        }
    }
}
