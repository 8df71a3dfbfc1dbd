@testable import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Synchronization
import Testing

/// A connection waiting for a lock keeps waiting while the database changes and gives up only when it
/// stops changing: the rule on its own (times and file looks given), then two real connections.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct SQLiteBusyWaitTests {
    static func look(_ n: Int64) -> SQLiteBusyWait.Fingerprint { .init(file: [4096, 1, 0, 7], log: [n, 1, n, 8]) }

    @Test func aDatabaseThatKeepsChangingIsWaitedForAndAStuckOneGivenUpAfterFiveSeconds() {
        var wait = SQLiteBusyWait()
        // Changing every second: waited for well past five seconds.
        for second in 0...20 {
            #expect(wait.decide(attempt: second, now: .seconds(second), fingerprint: Self.look(Int64(second))) == .retry(after: .milliseconds(1)))
        }
        // Then nothing changes: given up five seconds after the last change, not a moment earlier.
        #expect(wait.decide(attempt: 21, now: .milliseconds(24_999), fingerprint: Self.look(20)) == .retry(after: .milliseconds(1)))
        #expect(wait.decide(attempt: 22, now: .seconds(25), fingerprint: Self.look(20)) == .giveUp)

        // The next statement starts again from its own first failure.
        #expect(wait.decide(attempt: 0, now: .seconds(100), fingerprint: Self.look(20)) == .retry(after: .milliseconds(1)))
        #expect(wait.decide(attempt: 1, now: .milliseconds(104_999), fingerprint: Self.look(20)) == .retry(after: .milliseconds(1)))
        #expect(wait.decide(attempt: 2, now: .seconds(105), fingerprint: Self.look(20)) == .giveUp)
    }

    @Test func noWaitLastsPastSixtySecondsHoweverMuchTheDatabaseChanges() {
        var wait = SQLiteBusyWait()
        for second in 0..<60 {
            #expect(wait.decide(attempt: second, now: .seconds(second), fingerprint: Self.look(Int64(second))) == .retry(after: .milliseconds(1)))
        }
        #expect(wait.decide(attempt: 60, now: .seconds(60), fingerprint: Self.look(60)) == .giveUp)
    }

    @Test func eitherFileChangingCountsAsProgress() {
        var wait = SQLiteBusyWait()
        let start = SQLiteBusyWait.Fingerprint(file: [4096, 1, 0, 7], log: [])
        #expect(wait.decide(attempt: 0, now: .zero, fingerprint: start) == .retry(after: .milliseconds(1)))
        // A checkpoint changed the file (and removed the log) at 4 s: patience runs from there.
        let checkpointed = SQLiteBusyWait.Fingerprint(file: [8192, 2, 0, 7], log: [])
        #expect(wait.decide(attempt: 1, now: .seconds(4), fingerprint: checkpointed) == .retry(after: .milliseconds(1)))
        #expect(wait.decide(attempt: 2, now: .milliseconds(8_999), fingerprint: checkpointed) == .retry(after: .milliseconds(1)))
        #expect(wait.decide(attempt: 3, now: .seconds(9), fingerprint: checkpointed) == .giveUp)
    }

    /// One connection commits slow transactions back to back (each holds the write lock for 20 ms; the
    /// lock is free only for the instant between two of them). Another connection's write gets its turn
    /// instead of failing with `sqlite_busy`, however long that takes, while the first keeps committing.
    @Test func aWriteBehindBackToBackSlowTransactionsGetsItsTurn() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-busy-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/busy.sqlite"
        try SQLiteDatabaseFile(path: path).createPrivate()
        let holder = try SQLiteConnection(path: path, mode: .readWrite)
        try holder.enableWAL()
        try holder.execute("CREATE TABLE t (writer TEXT)")
        let waiter = try SQLiteConnection(path: path, mode: .readWrite)

        let waiterDone = Atomic<Bool>(false)
        let committed = Atomic<Int>(0)
        async let holding = ChildProcess.onOwnThread { () throws -> Int in
            // At most about a minute (the waiting rule's whole patience), so a lost waiter cannot hang.
            while !waiterDone.load(ordering: .acquiring), committed.load(ordering: .relaxed) < 3_000 {
                try holder.execute("BEGIN IMMEDIATE")
                try holder.execute("INSERT INTO t VALUES ('holder')")
                usleep(20_000)
                try holder.execute("COMMIT")
                committed.add(1, ordering: .releasing)
            }
            return committed.load(ordering: .relaxed)
        }
        let result = try await ChildProcess.onOwnThread { () -> Result<Void, SQLiteStoreError> in
            while committed.load(ordering: .acquiring) < 2 { usleep(1_000) }
            defer { waiterDone.store(true, ordering: .releasing) }
            do throws(SQLiteStoreError) {
                try waiter.execute("BEGIN IMMEDIATE")
                try waiter.execute("INSERT INTO t VALUES ('waiter')")
                try waiter.execute("COMMIT")
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        let total = try await holding
        #expect(throws: Never.self, "the waiting write failed") { try result.get() }
        #expect(total < 3_000, "the holder stopped only when the waiter was done")
        var rows: [String] = []
        try waiter.run("SELECT writer FROM t ORDER BY rowid") { row in rows.append(row.text(0) ?? "") }
        #expect(rows.filter { $0 == "waiter" }.count == 1)
        #expect(rows.filter { $0 == "holder" }.count == total)
        // It waited behind at least the two transactions it started after.
        #expect((rows.firstIndex(of: "waiter") ?? 0) >= 2)
    }
}
