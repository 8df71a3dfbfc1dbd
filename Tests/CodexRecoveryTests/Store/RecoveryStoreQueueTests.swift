import CodexCore
@testable import CodexRecovery
import CodexTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

/// The store's file work runs on its own queue: an `flock` wait on another holder keeps a queue thread,
/// never a thread of Swift's cooperative pool.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct RecoveryStoreQueueTests {
    /// The blocked `flock` requests the kernel lists for the file at `path` (read as the store reads
    /// `/proc/locks`: whole, with large reads, matching device and inode).
    private func waiters(on path: String) throws -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return try #require(RecoveryLockTable.blockedFlocks(on: info), "/proc/locks is unavailable")
    }

    /// ``waiters(on:)`` once three reads in a row agree. The kernel builds `/proc/locks` while it is
    /// read, a page at a time: when other tests take and drop locks meanwhile, one read can skip or
    /// repeat an entry of this file, so a single read is not a count. The reads run back to back on
    /// this thread: no await, so a pool kept busy by other tests does not stretch them.
    private func settledWaiters(on path: String) throws -> Int {
        var reads = [try waiters(on: path)]
        while reads.count < 3 || Set(reads.suffix(3)).count > 1 {
            reads.append(try waiters(on: path))
        }
        return reads[reads.count - 1]
    }

    @Test func commandsWaitingOnAHeldControlLockLeaveTheCooperativePoolFree() async throws {
        let harness = try RecoveryHarness(replies: [])
        let handle = try await harness.prepare()
        try await harness.recovery.suspend(handle, store: harness.store)
        let lockPath = try #require(
            FileManager.default.enumerator(atPath: harness.store.directory.path)?.compactMap { $0 as? String }.first { $0.hasSuffix(".control.lock") }
        )
        let path = harness.store.directory.appendingPathComponent(lockPath).path
        // Another holder (as another process would) keeps the operation's control lock.
        let holder = open(path, O_RDWR | O_CLOEXEC)
        try #require(holder >= 0)
        try #require(flock(holder, LOCK_EX) == 0)

        // More waiting commands than the pool has threads, each through its own store (its own queue).
        let width = ProcessInfo.processInfo.activeProcessorCount + 1
        let stores = try (0..<width).map { _ in try AgentStructuredRecoveryStore(directory: harness.store.directory) }
        let recovery = harness.recovery
        /// Raised when a command ends (before the lock is let go, only by failing) or the test is cancelled.
        final class Stop: Sendable { let raised = Atomic(false) }
        let stop = Stop()
        let commands = stores.map { store in
            Task {
                defer { stop.raised.store(true, ordering: .sequentiallyConsistent) }
                try await recovery.suspend(handle, store: store)
            }
        }
        try await withTaskCancellationHandler {
            // Wait for the event itself, every command parked in the kernel (the suite's time limit is
            // the only bound, and cancels the wait): on a loaded machine the queues may take a while to
            // reach their flock. The polling runs on a thread of its own, so it needs no pool thread per
            // look (other tests keep the pool's two threads busy in a full run).
            let parked = try await ChildProcess.onOwnThread { [self] in
                while !stop.raised.load(ordering: .sequentiallyConsistent), try settledWaiters(on: path) < width { usleep(2000) }
                return try settledWaiters(on: path)
            }
            #expect(parked == width, "no more waiters than commands")
            // Every command is parked in the kernel, and the pool still runs other work.
            #expect(await Task.detached { 6 * 7 }.value == 42)
            #expect(flock(holder, LOCK_UN) == 0)
            #expect(close(holder) == 0)
            for command in commands { try await command.value }
        } onCancel: {
            stop.raised.store(true, ordering: .sequentiallyConsistent)
            commands.forEach { $0.cancel() }
        }
        #expect(try waiters(on: path) == 0)
        #expect(try await harness.status(handle).state == .suspended)
    }
}
