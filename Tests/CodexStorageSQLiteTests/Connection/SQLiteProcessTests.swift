import CodexCore
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Glibc
import Testing

/// Real processes on one database: concurrent appenders lose nothing and never see "database is
/// locked"; a writer killed mid-append leaves an intact database with whole turns only.
@Suite(.serialized, .timeLimit(.minutes(3 * Sanitizer.slowdown))) struct SQLiteProcessTests {
    static let fixture = ChildProcess.product("StorageFixture")

    @Test func twoProcessesAppendingForSecondsLoseNothing() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-shared-\(UUID().uuidString).sqlite").path
        defer { SQLiteRuntimeStateStoreTests.remove(path) }
        let thread = AgentThreadID()
        // No database yet: both processes create, switch to WAL and migrate it at the same moment.
        async let first = ChildProcess.run(Self.fixture, ["--db", path, "--thread", thread.rawValue, "--writer", "a", "--seconds", "5"])
        async let second = ChildProcess.run(Self.fixture, ["--db", path, "--thread", thread.rawValue, "--writer", "b", "--seconds", "5"])
        let outcomes = try await [first, second]
        for outcome in outcomes {
            #expect(outcome.status == 0, "\(outcome.stderr)")
            #expect(!outcome.stderr.contains("locked"))
        }
        let reported = outcomes.compactMap { Int($0.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(reported.count == 2)
        #expect(reported.allSatisfy { $0 > 10 }, "\(reported)")
        let store = try SQLiteRuntimeStateStore(path: path)
        let items = try await store.replayableHistory(of: thread)
        #expect(items.count == reported.reduce(0, +) * 6)
        // Each writer's turns are whole, contiguous and in its own order.
        for writer in ["a", "b"] {
            let asked = items.compactMap { item -> Int? in
                guard case .message(let message) = item, message.role == .user, message.text.hasPrefix("\(writer) turn ") else { return nil }
                return Int(message.text.dropFirst("\(writer) turn ".count))
            }
            #expect(asked == Array(0..<asked.count), "writer \(writer)")
        }
        #expect(try await store.integrityCheck() == ["ok"])
    }

    @Test func aWriterKilledMidAppendLeavesWholeTurnsAndAnIntactDatabase() async throws {
        for round in 0..<3 {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-kill-\(UUID().uuidString).sqlite").path
            defer { SQLiteRuntimeStateStoreTests.remove(path) }
            let thread = AgentThreadID()
            let ready = path + ".ready"
            defer { unlink(ready) }
            // The kill waits for the child's first committed turn (an event, whatever the machine's speed),
            // then lands 0, 40 or 80 ms into the appends that follow, mid-transaction or between two.
            let outcome = try await ChildProcess.run(
                Self.fixture, ["--db", path, "--thread", thread.rawValue, "--writer", "k", "--seconds", "\(60 * Sanitizer.slowdown)", "--ready", ready]
            ) { pid in
                let deadline = ContinuousClock.now + .hangGuard
                while access(ready, F_OK) != 0, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
                try? await Task.sleep(for: .milliseconds(40 * round))
                kill(pid, SIGKILL)
            }
            #expect(outcome.killed)
            let store = try SQLiteRuntimeStateStore(path: path)
            #expect(try await store.integrityCheck() == ["ok"])
            let items = try await store.replayableHistory(of: thread)
            #expect(items.count % 6 == 0, "round \(round): \(items.count) items")
            #expect(items.count >= 6, "round \(round): the first turn was committed before the kill")
        }
    }
}
