import CodexKitTesting
import CSQLite
import CodexCore
import CodexRuntime
import CodexStorageSQLite
import Foundation
import Testing

/// Holds SQLite's write lock on a database file from a second connection, as another process would.
final class SQLiteWriteLock {
    private var handle: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open(path, &handle) == SQLITE_OK, sqlite3_exec(handle, "BEGIN EXCLUSIVE", nil, nil, nil) == SQLITE_OK else {
            throw AgentRuntimeError(code: .storageFailure, message: "could not take the lock")
        }
    }

    func release() {
        sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
        sqlite3_close(handle)
        handle = nil
    }

    deinit { if handle != nil { release() } }
}

@Suite struct AgentRuntimeDiskLockTests {
    @Test func aCallerCanLeaveWhileTheDatabaseIsLockedAndTheAcceptedInputFlushesInOrderLater() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-runtime-lock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("state.sqlite").path
        let store = try SQLiteRuntimeStateStore(path: path)
        let backend = FixtureAgentBackend(turns: [.reply("never")])
        let log = InMemoryAgentLogSink()
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: store, logSink: log))
        let thread = try await runtime.createThread()

        let lock = try SQLiteWriteLock(path: path)
        let task = Task { () -> (any Error)? in
            do {
                _ = try await runtime.send(Request(text: "accepted while locked"), in: thread.id)
                return nil
            } catch {
                return error
            }
        }
        // The input write is accepted (queued behind nothing, waiting on the lock) before the caller leaves.
        await eventually("the input was accepted") { log.events.contains { $0.name == "runtime.turn.input_accepted" } }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        let error = await task.value
        #expect(error is CancellationError)
        #expect(try await store.latestTurn(of: thread.id) == nil, "nothing was written while the lock was held")
        lock.release()
        await runtime.flushPendingWrites()
        #expect(describe(try await history(store, thread.id)) == ["event turn_started", "user: accepted while locked", "event turn_interrupted"])
        #expect(try await store.latestTurn(of: thread.id)?.status == .interrupted)
        #expect(try await store.thread(thread.id)?.status == .idle)
        #expect(backend.requests.isEmpty)
        #expect(runtime.activeTurnID(in: thread.id) == nil)
    }

    @Test func aStartWaiterCanLeaveWhileTheDatabaseIsLockedAndRecoveryFlushesLater() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-runtime-start-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("state.sqlite").path
        let store = try SQLiteRuntimeStateStore(path: path)
        // What a killed process leaves: a running thread with a running turn.
        let thread = AgentThread(status: .running)
        try await store.upsertThread(thread)
        try await store.upsertTurn(AgentTurn(threadID: thread.id, status: .running))
        let log = InMemoryAgentLogSink()
        let runtime = try AgentRuntime(configuration: .init(backend: FixtureAgentBackend(turns: []), stateStore: store, logSink: log))

        let lock = try SQLiteWriteLock(path: path)
        let task = Task { () -> (any Error)? in
            do {
                _ = try await runtime.recoverAbandonedTurns()
                return nil
            } catch {
                return error
            }
        }
        await eventually("recovery began") { log.events.contains { $0.name == "runtime.start.recovering" } }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        #expect(await task.value is CancellationError)
        #expect(try await store.thread(thread.id)?.status == .running, "nothing was written while the lock was held")
        lock.release()
        await runtime.flushPendingWrites()
        #expect(try await store.thread(thread.id)?.status == .idle)
        #expect(try await store.latestTurn(of: thread.id)?.status == .interrupted)
    }
}
