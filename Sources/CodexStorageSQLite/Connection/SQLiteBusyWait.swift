/// How a connection waits for a lock another connection of the same file holds (SQLite's busy handler).
///
/// SQLite's own busy timeout sleeps up to 100 ms between tries and gives up after a fixed time. Against
/// a writer in another process that commits one transaction after another, the lock is free only in the
/// short moments between its transactions, so a waiter that looks every 100 ms can miss every one of
/// them and fail with `sqlite_busy` while the other writer is making progress; on a slow disk, where each
/// commit's fsync takes tens of milliseconds, that happened within five seconds.
///
/// This policy looks every millisecond, and measures its patience in time without progress: it keeps
/// waiting while the database keeps changing (another connection is committing) and gives up after
/// ``stallLimit`` in which nothing changed (a holder that is stuck), or after ``totalLimit`` in all.
/// It is a pure value: the caller supplies the time and what the files look like.
struct SQLiteBusyWait: Sendable, Equatable {
    /// What the database's files look like (size and modification time of the file and its write-ahead
    /// log): a commit or checkpoint by any connection changes it.
    struct Fingerprint: Sendable, Equatable {
        var file: [Int64]
        var log: [Int64]
    }

    /// What to do after a failed try.
    enum Decision: Sendable, Equatable {
        /// Sleep this long, then try again.
        case retry(after: Duration)
        /// Give up: the statement fails with `sqlite_busy`.
        case giveUp
    }

    /// The longest time without any change to the database before giving up.
    static let stallLimit: Duration = .seconds(5)
    /// The longest wait in all, however much the database changes meanwhile.
    static let totalLimit: Duration = .seconds(60)
    /// The pause between tries.
    static let pause: Duration = .milliseconds(1)

    private var start: Duration = .zero
    private var lastChange: Duration = .zero
    private var lastFingerprint: Fingerprint?

    /// Decides after try number `attempt` (0 for the first failure of a statement, as SQLite counts)
    /// failed at `now` (any monotonic time) with the files looking like `fingerprint`.
    mutating func decide(attempt: Int, now: Duration, fingerprint: Fingerprint) -> Decision {
        if attempt == 0 || lastFingerprint == nil {
            start = now
            lastChange = now
            lastFingerprint = fingerprint
        } else if fingerprint != lastFingerprint {
            lastChange = now
            lastFingerprint = fingerprint
        }
        if now - lastChange >= Self.stallLimit || now - start >= Self.totalLimit { return .giveUp }
        return .retry(after: Self.pause)
    }
}
