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
final class PostgresOwnerLease: RuntimeOwnerLease, Sendable {
    let ownerID: String
    private let holder: PostgresLeaseHolder

    var key: Int64 { holder.key }

    /// Takes a new lease (blocking).
    init(settings: PostgresConnectionSettings) throws(PostgresStoreError) {
        ownerID = UUID().uuidString.lowercased()
        let held = try PostgresConnection(settings)
        var key: Int64 = 0
        var locked = false
        while !locked {
            key = Int64.random(in: 1...Int64.max)
            try held.run("SELECT pg_try_advisory_lock($1)", [.integer(key)]) { row throws(PostgresStoreError) in locked = row.bool(0) }
        }
        try Self.prune(held)
        try held.run(
            "INSERT INTO codex_owners(owner_id, lock_key, acquired_at) VALUES ($1, $2, $3)",
            [.text(ownerID), .integer(key), .double(Date().timeIntervalSince1970)]
        )
        holder = try PostgresLeaseHolder(settings: settings, key: key, connection: held)
        let holder = self.holder
        let monitor = Thread { holder.monitor() }
        monitor.name = "codexkit.postgres.lease"
        monitor.start()
    }

    /// Releases the lock: the monitor closes its connection and ends.
    deinit { holder.stop() }

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

/// What the lease's monitor thread owns: the connection that holds the lock, and the pipe that tells
/// it to stop. The lease object itself is not kept alive by the thread, so releasing it ends the lease.
final class PostgresLeaseHolder: Sendable {
    let key: Int64
    private let settings: PostgresConnectionSettings
    /// The connection holding the lock (replaced after a reconnect; `nil` once stopped).
    private let connection: Mutex<PostgresConnection?>
    /// Written to when the lease is released, to wake the monitor.
    private let stopPipe: (read: Int32, write: Int32)
    private let stopped = Mutex(false)

    init(settings: PostgresConnectionSettings, key: Int64, connection: PostgresConnection) throws(PostgresStoreError) {
        self.settings = settings
        self.key = key
        self.connection = Mutex(connection)
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw PostgresStoreError(code: .failure, message: "cannot create the lease monitor's pipe") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        stopPipe = (fds[0], fds[1])
    }

    /// Tells the monitor to end; the lock's connection is closed at once.
    func stop() {
        stopped.withLock { $0 = true }
        connection.withLock { $0 = nil }
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
        close(stopPipe.write)
    }

    /// Waits for the lock's connection to break, then takes the lock again on a new one, until stopped.
    func monitor() {
        let stopRead = stopPipe.read
        defer { close(stopRead) }
        var pauseMilliseconds: Int32 = 100
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
            if let fresh = try? PostgresConnection(settings) {
                var locked = false
                _ = try? fresh.run("SELECT pg_try_advisory_lock($1)", [.integer(key)]) { row throws(PostgresStoreError) in locked = row.bool(0) }
                if locked, !stopped.withLock({ $0 }) {
                    connection.withLock { $0 = fresh }
                    pauseMilliseconds = 100
                    continue
                }
            }
            var fds = [pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 1, pauseMilliseconds) > 0 { return }
            pauseMilliseconds = min(pauseMilliseconds * 2, 5_000)
        }
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
