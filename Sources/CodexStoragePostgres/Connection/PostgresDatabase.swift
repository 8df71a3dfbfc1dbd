import Foundation
import Synchronization

/// The store's transactions over the pool: reads in one snapshot, retried on a fresh connection when the
/// old one broke; writes in one transaction that also records a write key, so that when the connection
/// breaks mid-write the store can ask whether the write landed before it tries again or reports
/// `storage_unavailable`. A transaction that lost to another one (deadlock, serialization) is run again.
final class PostgresDatabase: Sendable {
    let pool: PostgresPool
    let readOnly: Bool
    /// How many times a transaction that lost to another one is run again.
    static let busyRetries = 4
    /// Writes since the write log was last pruned.
    private let writesSincePrune = Mutex(0)
    /// Test hook: how many of the next commits lose their reply (the commit happens; the store is told
    /// the connection broke), to prove the write-key check.
    let lostCommitReplies = Mutex(0)

    init(pool: PostgresPool, readOnly: Bool) {
        self.pool = pool
        self.readOnly = readOnly
    }

    /// Runs `body` in one read-only transaction (`REPEATABLE READ`: one snapshot for every statement).
    /// A broken connection is replaced and the read runs once more.
    func read<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws(PostgresStoreError) -> T) async throws(PostgresStoreError) -> T {
        var attempt = 0
        while true {
            attempt += 1
            do throws(PostgresStoreError) {
                return try await pool.withConnection { connection throws(PostgresStoreError) -> T in
                    connection.begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    do throws(PostgresStoreError) {
                        let value = try body(connection)
                        try connection.commit()
                        return value
                    } catch {
                        connection.rollback()
                        throw error
                    }
                }
            } catch where (error.code == .unavailable && attempt < 2) || (error.code == .busy && attempt <= Self.busyRetries) {
                continue
            }
        }
    }

    /// Runs `body`, which issues exactly one statement, outside an explicit transaction (the statement is
    /// its own snapshot): one round trip. A broken connection is replaced and the read runs once more.
    func readStatement<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws(PostgresStoreError) -> T) async throws(PostgresStoreError) -> T {
        var attempt = 0
        while true {
            attempt += 1
            do throws(PostgresStoreError) {
                return try await pool.withConnection(body)
            } catch where error.code == .unavailable && attempt < 2 {
                continue
            }
        }
    }

    /// Runs `body` in one write transaction that also records a fresh write key.
    ///
    /// When the connection breaks before the commit is confirmed, the outcome is unknown: the store asks
    /// on a new connection whether the key was committed. Committed: `ifLanded` gives the result (a
    /// re-read). Not committed: the write runs once more. The server still unreachable:
    /// `storage_unavailable`, saying whether the write is known not to have happened.
    func write<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) throws(PostgresStoreError) -> T,
        ifLanded: @escaping @Sendable () async throws(PostgresStoreError) -> T
    ) async throws(PostgresStoreError) -> T {
        guard !readOnly else { throw PostgresStoreError(code: .writeRefused, message: "the store was opened read-only") }
        var lostOnce = false
        var busy = 0
        while true {
            let key = Self.writeKey()
            do throws(PostgresStoreError) {
                let value = try await pool.withConnection { connection throws(PostgresStoreError) -> T in
                    // BEGIN and the write key travel with the body's first statement; COMMIT with what the
                    // body queued last.
                    connection.begin()
                    connection.enqueue("INSERT INTO codex_write_log(key) VALUES ($1::uuid)", [.text(key)])
                    do throws(PostgresStoreError) {
                        let value = try body(connection)
                        try connection.commit()
                        if self.lostCommitReplies.withLock({ count in
                            guard count > 0 else { return false }
                            count -= 1
                            return true
                        }) {
                            throw PostgresStoreError(code: .unavailable, message: "the reply to the commit was lost (injected)")
                        }
                        return value
                    } catch {
                        connection.rollback()
                        throw error
                    }
                }
                await pruneWriteLogNow()
                return value
            } catch where error.code == .busy && busy < Self.busyRetries {
                busy += 1
            } catch where error.code == .unavailable {
                let landed: Bool
                do throws(PostgresStoreError) {
                    landed = try await pool.withConnection { connection throws(PostgresStoreError) -> Bool in
                        var found = false
                        try connection.run("SELECT 1 FROM codex_write_log WHERE key = $1::uuid", [.text(key)]) { _ throws(PostgresStoreError) in found = true }
                        return found
                    }
                } catch {
                    throw PostgresStoreError(
                        code: .unavailable, message: "the connection broke during a write and the server cannot be asked whether it was committed",
                        writeOutcomeUnknown: true
                    )
                }
                if landed { return try await ifLanded() }
                guard !lostOnce else {
                    throw PostgresStoreError(code: .unavailable, message: "the connection broke twice during a write; it was not committed")
                }
                lostOnce = true
            }
        }
    }

    /// ``write(_:ifLanded:)`` for a write with no result.
    func write(_ body: @escaping @Sendable (PostgresConnection) throws(PostgresStoreError) -> Void) async throws(PostgresStoreError) {
        try await write(body, ifLanded: {})
    }

    /// A write key: a time-ordered UUID (version 7: milliseconds since 1970, then random bits), so the
    /// keys of a day ago are one range of the primary key's index and pruning needs no index of its own.
    /// With `random` false, the smallest key of that millisecond.
    static func writeKey(at date: Date = Date(), random: Bool = true) -> String {
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
        if random {
            for index in 6..<16 { bytes[index] = UInt8.random(in: 0...255) }
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x70
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }

    /// Every 1,024 writes, removes write keys older than a day (a key is only asked about right after
    /// its own write broke).
    private func pruneWriteLogNow() async {
        let due = writesSincePrune.withLock { count -> Bool in
            count += 1
            guard count >= 1024 else { return false }
            count = 0
            return true
        }
        guard due else { return }
        _ = try? await pool.withConnection { connection throws(PostgresStoreError) in
            try connection.run("DELETE FROM codex_write_log WHERE key < $1::uuid", [.text(Self.writeKey(at: Date().addingTimeInterval(-86_400), random: false))])
        }
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
