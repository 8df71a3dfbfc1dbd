import CodexCore
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One runtime instance's owner lease on a PostgreSQL store: a session-level advisory lock on a
/// connection of its own (the server releases it when that connection drops, so it dies with the
/// process), and a row in `codex_owners` that maps the owner's ID to the lock's key.
///
/// If the server goes away and comes back, a monitor thread reconnects and takes the same lock again:
/// between the two, other replicas see the owner as gone (a server restart ends every session), which
/// is the same as a crash of every replica at once.
final class PostgresOwnerLease: RuntimeOwnerLease, @unchecked Sendable {
    let ownerID: String
    let key: Int64
    private let settings: PostgresConnectionSettings
    /// The connection holding the lock (replaced after a reconnect).
    private let connection: Mutex<PostgresConnection?>
    /// Written to when the lease is released, to wake the monitor.
    private let stopPipe: (read: Int32, write: Int32)
    private let stopped = Mutex(false)

    /// Takes a new lease (blocking).
    init(settings: PostgresConnectionSettings) throws(PostgresStoreError) {
        self.settings = settings
        ownerID = UUID().uuidString.lowercased()
        var key: Int64 = 0
        let held = try PostgresConnection(settings)
        var locked = false
        while !locked {
            key = Int64.random(in: 1...Int64.max)
            try held.run("SELECT pg_try_advisory_lock($1)", [.integer(key)]) { row throws(PostgresStoreError) in locked = row.bool(0) }
        }
        self.key = key
        try Self.prune(held)
        try held.run(
            "INSERT INTO codex_owners(owner_id, lock_key, acquired_at) VALUES ($1, $2, $3)",
            [.text(ownerID), .integer(key), .double(Date().timeIntervalSince1970)]
        )
        connection = Mutex(held)
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw PostgresStoreError(code: .failure, message: "cannot create the lease monitor's pipe") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        stopPipe = (fds[0], fds[1])
        let monitor = Thread { [weak self] in self?.monitor() }
        monitor.name = "codexkit.postgres.lease"
        monitor.start()
    }

    deinit {
        stopped.withLock { $0 = true }
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
        close(stopPipe.write)
        // The monitor closes the read end; the connection (and with it the lock) goes with this object.
    }

    /// Waits for the lock's connection to break, then takes the lock again on a new one, until the lease
    /// is released.
    private func monitor() {
        let stopRead = stopPipe.read
        defer { close(stopRead) }
        var pause: UInt32 = 100_000
        while !stopped.withLock({ $0 }) {
            let socket = connection.withLock { $0?.socket ?? -1 }
            if socket >= 0 {
                var fds = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0)]
                guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { return }
                if fds[1].revents != 0 { return }
                if connection.withLock({ $0?.consumeInput() ?? false }) { continue }
                connection.withLock { $0 = nil }
            }
            // Reconnect and take the same lock again.
            do {
                let fresh = try PostgresConnection(settings)
                var locked = false
                try fresh.run("SELECT pg_try_advisory_lock($1)", [.integer(key)]) { row throws(PostgresStoreError) in locked = row.bool(0) }
                if locked {
                    connection.withLock { $0 = fresh }
                    pause = 100_000
                    continue
                }
            } catch {}
            var fds = [pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 1, Int32(pause / 1000)) > 0 { return }
            pause = min(pause * 2, 5_000_000)
        }
    }

    /// Removes the rows of owners whose locks nobody holds (their processes are gone).
    static func prune(_ connection: PostgresConnection) throws(PostgresStoreError) {
        try connection.run("""
            DELETE FROM codex_owners o WHERE NOT EXISTS (
                SELECT 1 FROM pg_locks l
                WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
                  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND l.classid = ((o.lock_key >> 32) & 4294967295)::oid AND l.objid = (o.lock_key & 4294967295)::oid
            )
            """)
    }
}

/// Answers "is this owner's lock held?" from `pg_locks`, on a connection of its own kept for it.
final class PostgresLeaseProbe: Sendable {
    private let settings: PostgresConnectionSettings
    private let connection = Mutex<PostgresConnection?>(nil)

    init(settings: PostgresConnectionSettings) { self.settings = settings }

    /// Whether a live session holds the lease of `ownerID` (`false` for an owner never seen).
    func isHeld(_ ownerID: String) throws(PostgresStoreError) -> Bool {
        try connection.withLock { connection throws(PostgresStoreError) -> Bool in
            if connection?.isHealthy != true { connection = try PostgresConnection(settings) }
            guard let connection else { return false }
            var held = false
            try connection.run("""
                SELECT 1 FROM codex_owners o JOIN pg_locks l
                  ON l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
                 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                 AND l.classid = ((o.lock_key >> 32) & 4294967295)::oid AND l.objid = (o.lock_key & 4294967295)::oid
                WHERE o.owner_id = $1
                """, [.text(ownerID)]) { _ throws(PostgresStoreError) in held = true }
            return held
        }
    }
}
