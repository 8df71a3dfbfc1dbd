import Foundation

/// What one kind of store keeps in its database file: named, ordered, forward-only migrations recorded in
/// a table of its own, and the words its errors use. The state store and the memory store are two values
/// of this type over one engine (``SQLiteDatabase``) and one migration runner (``SQLiteMigrator``).
struct SQLiteSchema: Sendable {
    /// One migration: its position (1-based), a stable name, its SQL, and an optional step run after the
    /// SQL in the same transaction (for work SQL cannot express, such as rebuilding an index from decoded
    /// rows).
    struct Migration: Sendable {
        let position: Int
        let name: String
        let sql: String
        var step: (@Sendable (SQLiteConnection) throws(SQLiteStoreError) -> Void)?
    }

    /// The store's name in messages: `state store`, `memory store`.
    let kind: String
    /// A migration's name in messages: `migration`, `memory migration`.
    let migrationNoun: String
    /// The table that records applied migrations; a database with tables and without this one belongs to
    /// something else.
    let migrationTable: String
    /// The migrations in order.
    let migrations: [Migration]
    /// Tables a store of this kind must have once migrated (checked after migrating and, with
    /// ``checksTablesOnRead``, before reading); a store without one is corrupt.
    var requiredTables: [String] = []
    /// Whether a read-only open refuses a store that lacks a required table. The state store's is off so
    /// that its checker can open a damaged store and report every problem; its statements then name the
    /// missing table (`sqlite_corrupt`).
    var checksTablesOnRead = true
    /// Directories the store keeps beside its file (`<path><suffix>`), checked before opening for writing.
    var companionDirectorySuffixes: [String] = []
    /// What a read-only open of an outdated store tells the reader to do.
    var migrateHint = "open it for writing once to apply it"
}
