private import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The state of one connection's busy handler: the ``SQLiteBusyWait`` policy, fed with the time and the
/// database files' look. Used only on the connection's queue, inside SQLite's calls, like the connection.
final class SQLiteBusyWaiter: @unchecked Sendable {
    private var wait = SQLiteBusyWait()
    private let filePath: String
    private let logPath: String
    private let clock = ContinuousClock()
    private let origin: ContinuousClock.Instant

    /// A waiter for the database file at `path`.
    init(path: String) {
        filePath = path
        logPath = path + "-wal"
        origin = clock.now
    }

    /// Whether SQLite should try again after failure number `attempt`; sleeps first when it should.
    func shouldRetry(attempt: Int) -> Bool {
        let fingerprint = SQLiteBusyWait.Fingerprint(file: Self.look(filePath), log: Self.look(logPath))
        switch wait.decide(attempt: attempt, now: clock.now - origin, fingerprint: fingerprint) {
        case .giveUp:
            return false
        case .retry(let pause):
            let (seconds, attoseconds) = pause.components
            usleep(useconds_t(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
            return true
        }
    }

    /// Size and modification time of `path` (empty when it cannot be read: a missing log is a look too).
    private static func look(_ path: String) -> [Int64] {
        var status = stat()
        guard stat(path, &status) == 0 else { return [] }
        return [Int64(status.st_size), Int64(status.st_mtim.tv_sec), Int64(status.st_mtim.tv_nsec), Int64(status.st_ino)]
    }
}

/// SQLite's busy callback: the context is the connection's ``SQLiteBusyWaiter``.
let sqliteBusyCallback: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 = { context, attempt in
    guard let context else { return 0 }
    return Unmanaged<SQLiteBusyWaiter>.fromOpaque(context).takeUnretainedValue().shouldRetry(attempt: Int(attempt)) ? 1 : 0
}
