import CodexCore
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// Several stores on one database file in one process, with another process writing: opening a store
/// must never drop the locks the process's other connections hold (POSIX releases every lock a process
/// holds on a file when any of its descriptors for that file is closed), or another process takes the
/// database for its own, deletes the log under a live connection, and committed writes are lost.
@Suite(.serialized, .timeLimit(.minutes(3 * Sanitizer.slowdown))) struct SQLiteSameProcessStoresTests {
    static let fixture = ChildProcess.product("StorageFixture")

    static func probe(_ path: String) async throws -> String {
        let outcome = try await ChildProcess.run(fixture, ["--probe-shared-lock", path])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        return outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func openingMoreStoresOnTheFileKeepsTheLocksOfTheOpenOnes() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-same-\(UUID().uuidString).sqlite").path
        defer { SQLiteRuntimeStateStoreTests.remove(path) }
        let first = try SQLiteRuntimeStateStore(path: path)
        let thread = AgentThread(title: "one")
        try await first.upsertThread(thread)
        #expect(try await Self.probe(path) == "held", "an open WAL connection keeps its shared lock")
        let second = try SQLiteRuntimeStateStore(path: path)
        #expect(try await Self.probe(path) == "held", "opening a second writable store")
        let reader = try SQLiteRuntimeStateStore(readingAt: path)
        #expect(try await Self.probe(path) == "held", "opening a reading store")
        #expect(try await reader.thread(thread.id)?.title == "one")
        #expect(try await second.thread(thread.id)?.title == "one")
    }

    /// A reading store opened on a cleanly closed file reads it immutable (no locks, no `-shm`); when a
    /// writable store opens in the same process and the reader then goes (or moves to an ordinary
    /// connection because a writer appeared), closing its file must not drop the writer's locks.
    @Test func closingAnImmutableReaderKeepsTheLocksOfAWriterInTheSameProcess() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-same-\(UUID().uuidString).sqlite").path
        defer { SQLiteRuntimeStateStoreTests.remove(path) }
        let thread = AgentThread(title: "one")
        do {
            let creator = try SQLiteRuntimeStateStore(path: path)
            try await creator.upsertThread(thread)
        }
        // Cleanly closed: the reader is immutable.
        var reader: SQLiteRuntimeStateStore? = try SQLiteRuntimeStateStore(readingAt: path)
        #expect(try await reader?.thread(thread.id)?.title == "one")
        let writer = try SQLiteRuntimeStateStore(path: path)
        try await writer.upsertThread(AgentThread(title: "two"))
        #expect(try await Self.probe(path) == "held")
        // The reader's next read finds the writer's log and moves to an ordinary connection.
        #expect(try await reader?.threads().count == 2)
        #expect(try await Self.probe(path) == "held", "after the reader left its immutable connection")
        reader = nil
        #expect(try await Self.probe(path) == "held", "after the reader closed")
        #expect(try await writer.threads().count == 2)
    }

    @Test func writesOfAnotherProcessSurviveWhileThisOneOpensMoreStores() async throws {
        for round in 0..<3 {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-same-\(UUID().uuidString).sqlite").path
            defer { SQLiteRuntimeStateStoreTests.remove(path) }
            let thread = AgentThreadID()
            var first: SQLiteRuntimeStateStore? = try SQLiteRuntimeStateStore(path: path)
            try await first?.upsertThread(AgentThread(id: thread, title: "shared"))
            // What the demo's parent did: more stores on the same file while other processes write.
            var reader: SQLiteRuntimeStateStore? = try SQLiteRuntimeStateStore(readingAt: path)
            var second: SQLiteRuntimeStateStore? = try SQLiteRuntimeStateStore(path: path)
            let outcome = try await ChildProcess.run(Self.fixture, ["--db", path, "--thread", thread.rawValue, "--writer", "c", "--turns", "3"])
            #expect(outcome.status == 0, "\(outcome.stderr)")
            #expect(try await first?.replayableHistory(of: thread).count == 18, "round \(round): this process sees the other's writes")
            #expect(try await reader?.replayableHistory(of: thread).count == 18, "round \(round)")
            try await second?.appendHistory([.message(AgentMessage(threadID: thread, role: .user, text: "after"))], to: thread)
            first = nil
            reader = nil
            second = nil
            let reopened = try SQLiteRuntimeStateStore(path: path)
            #expect(try await reopened.replayableHistory(of: thread).count == 19, "round \(round): nothing committed is lost")
            #expect(try await reopened.integrityCheck() == ["ok"])
        }
    }
}
