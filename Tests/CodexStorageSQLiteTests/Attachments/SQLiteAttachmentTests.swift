import CodexCore
@testable import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// Image bytes live in content-addressed blobs written before their rows; restore reloads them;
/// deleting a thread removes blobs nothing else refers to; the orphan sweep removes leftovers.
@Suite struct SQLiteAttachmentTests {
    static let photo = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    static let chart = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) })

    private func paths() -> (db: String, blobs: URL) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-att-\(UUID().uuidString).sqlite").path
        return (path, URL(fileURLWithPath: path + ".attachments"))
    }

    private func message(_ thread: AgentThreadID, _ images: [AgentImageAttachment]) -> AgentHistoryItem {
        .message(AgentMessage(threadID: thread, role: .user, text: "look", images: images, createdAt: Date(timeIntervalSinceReferenceDate: 9)))
    }

    @Test func imagesRoundTripThroughContentAddressedBlobs() async throws {
        let (path, blobs) = paths()
        defer {
            SQLiteRuntimeStateStoreTests.remove(path)
            try? FileManager.default.removeItem(at: blobs)
        }
        let store = try SQLiteRuntimeStateStore(path: path)
        let thread = AgentThread()
        try await store.upsertThread(thread)
        let generated = AgentImageAttachment(data: Self.chart, mimeType: "image/png", generationMetadata: .init(revisedPrompt: "a chart", size: "1024x1024"))
        let items = [message(thread.id, [.jpeg(Self.photo), generated, .jpeg(Self.photo)]), message(thread.id, [])]
        try await store.appendHistory(items, to: thread.id)

        let keys = SQLiteAttachmentFiles(directory: blobs).keys()
        #expect(keys == [SQLiteAttachmentFiles.key(of: Self.photo), SQLiteAttachmentFiles.key(of: Self.chart)].sorted())
        #expect(try Data(contentsOf: SQLiteAttachmentFiles(directory: blobs).url(for: SQLiteAttachmentFiles.key(of: Self.photo))) == Self.photo)
        // The row itself holds no image bytes.
        let rowBytes = try await store.database.read { connection throws(SQLiteStoreError) -> Int in
            var size = 0
            try connection.run("SELECT SUM(LENGTH(body)) FROM history_items") { row throws(SQLiteStoreError) in size = Int(row.integer(0)) }
            return size
        }
        #expect(rowBytes < 2_000)

        let restored = try await SQLiteRuntimeStateStore(path: path).history(of: thread.id, query: .init())
        #expect(restored.items == items)
    }

    @Test func deletingAThreadRemovesOnlyBlobsNothingElseUsesAndTheSweepCleansUp() async throws {
        let (path, blobs) = paths()
        defer {
            SQLiteRuntimeStateStoreTests.remove(path)
            try? FileManager.default.removeItem(at: blobs)
        }
        let store = try SQLiteRuntimeStateStore(path: path)
        let doomed = AgentThread()
        let kept = AgentThread()
        try await store.upsertThread(doomed)
        try await store.upsertThread(kept)
        try await store.appendHistory([message(doomed.id, [.jpeg(Self.photo), .png(Self.chart)])], to: doomed.id)
        try await store.appendHistory([message(kept.id, [.jpeg(Self.photo)])], to: kept.id)
        let files = SQLiteAttachmentFiles(directory: blobs)
        #expect(files.keys().count == 2)

        try await store.deleteThread(doomed.id)
        #expect(files.keys() == [SQLiteAttachmentFiles.key(of: Self.photo)])
        #expect(try await store.history(of: kept.id, query: .init()).items.count == 1)

        // A blob left behind by a crash between a deletion's commit and its cleanup.
        let orphan = Data("orphan".utf8)
        try files.store(orphan, key: SQLiteAttachmentFiles.key(of: orphan))
        #expect(files.keys().count == 2)
        #expect(try await store.sweepOrphanedAttachments() == 1)
        #expect(files.keys() == [SQLiteAttachmentFiles.key(of: Self.photo)])
        #expect(try await store.sweepOrphanedAttachments() == 0)
        if case .message(let restored)? = try await store.history(of: kept.id, query: .init()).items.first {
            #expect(restored.images.first?.data == Self.photo)
        } else {
            Issue.record("the kept message is gone")
        }
    }

    @Test func inMemoryStoresKeepImagesInTheRows() async throws {
        let store = try SQLiteRuntimeStateStore(path: ":memory:")
        let thread = AgentThread()
        try await store.upsertThread(thread)
        let items = [message(thread.id, [.png(Self.chart)])]
        try await store.appendHistory(items, to: thread.id)
        #expect(try await store.history(of: thread.id, query: .init()).items == items)
        #expect(try await store.sweepOrphanedAttachments() == 0)
    }
}
