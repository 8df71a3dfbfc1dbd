public import Foundation

/// A store of ``MemoryRecord``s: upsert with dedupe, read, delete, archive, list and ranked search.
/// ``InMemoryMemoryStore`` keeps records in the process; the SQLite store of `CodexStorageSQLite` keeps
/// them in a file with a full-text index. Both pass the same conformance suite.
///
/// ```swift
/// let store: any MemoryStoring = InMemoryMemoryStore()
/// try await store.upsert(MemoryRecord(namespace: "shop", summary: "Prefers Tuesday delivery.", dedupeKey: "delivery-day"))
/// let found = try await store.search(MemoryQuery(namespace: "shop", text: "tuesday"))
/// ```
public protocol MemoryStoring: Sendable {
    /// Stores `record` after validating it. A record with the ID of a stored record, or with the dedupe
    /// key of a stored record of the same namespace, replaces it: the stored record keeps its ID and
    /// creation date and takes every other field from `record`.
    /// - Throws: `memory_record_invalid` (nothing written), `memory_dedupe_conflict` when the ID and the
    ///   dedupe key name two different records, or a storage failure.
    @discardableResult
    func upsert(_ record: MemoryRecord) async throws(MemoryStoreError) -> MemoryUpsertOutcome

    /// The record with `id`, or `nil`.
    func record(_ id: MemoryRecordID) async throws(MemoryStoreError) -> MemoryRecord?

    /// Deletes the record with `id`; returns whether there was one.
    @discardableResult
    func delete(_ id: MemoryRecordID) async throws(MemoryStoreError) -> Bool

    /// Archives the record with `id` (its update date becomes `date`, or its creation date when that
    /// is later); returns whether there was one.
    @discardableResult
    func archive(_ id: MemoryRecordID, at date: Date) async throws(MemoryStoreError) -> Bool

    /// Records of a namespace, most recently updated first (then by ID).
    func list(_ query: MemoryListQuery) async throws(MemoryStoreError) -> [MemoryRecord]

    /// Ranked records matching `query`, within its read budget, each with an explanation.
    /// - Throws: `memory_query_invalid` naming the limit, or a storage failure.
    func search(_ query: MemoryQuery) async throws(MemoryStoreError) -> MemorySearchResult
}

/// What an upsert did.
public enum MemoryUpsertOutcome: Sendable, Hashable {
    /// No record had the ID or dedupe key; this one was added.
    case inserted(MemoryRecord)
    /// `previous` (found by ID or dedupe key) was replaced by `stored`.
    case replaced(previous: MemoryRecord, stored: MemoryRecord)

    /// The record as stored.
    public var stored: MemoryRecord {
        switch self {
        case .inserted(let record): record
        case .replaced(_, let stored): stored
        }
    }
}

extension MemoryRecord {
    /// This record as it replaces `existing`: `existing`'s ID and creation date, everything else from
    /// this record (an update date before the creation date becomes the creation date).
    package func replacing(_ existing: MemoryRecord) -> MemoryRecord {
        var stored = self
        stored.id = existing.id
        stored.createdAt = existing.createdAt
        if stored.updatedAt < stored.createdAt { stored.updatedAt = stored.createdAt }
        return stored
    }

    /// This record archived at `date`.
    package func archived(at date: Date) -> MemoryRecord {
        var stored = self
        stored.isArchived = true
        stored.updatedAt = max(date, createdAt)
        return stored
    }
}
