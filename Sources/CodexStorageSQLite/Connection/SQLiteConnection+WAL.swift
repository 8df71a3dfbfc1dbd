#if canImport(Glibc)
import Glibc
#endif

extension SQLiteConnection {
    /// Switches the database to WAL unless it already is. Converting a new file needs an exclusive lock,
    /// and SQLite reports BUSY at once (without the busy handler) when another connection holds a shared
    /// one, so this retries for up to 5 s, then checks that WAL is really on. Used by the state store
    /// and the memory store.
    func enableWAL() throws(SQLiteStoreError) {
        var mode = ""
        for attempt in 0..<500 {
            do throws(SQLiteStoreError) {
                try run("PRAGMA journal_mode=WAL") { row throws(SQLiteStoreError) in mode = row.text(0) ?? "" }
                break
            } catch where error.code == .busy && attempt < 499 {
                usleep(10_000)
            }
        }
        guard mode.lowercased() == "wal" else {
            throw SQLiteStoreError(code: .failure, message: "the database could not be switched to WAL (journal mode \(mode))")
        }
    }
}
