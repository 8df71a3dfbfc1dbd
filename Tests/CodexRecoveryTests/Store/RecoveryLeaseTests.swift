@testable import CodexRecovery
import CodexTestSupport
import Foundation
import Glibc
import Testing

/// Leases: `flock` on never-deleted lock files, refused to a second holder in the same process, freed
/// on release (even while a forked child still shares the descriptor), fail closed when the lock file
/// is replaced, and never inherited by child processes.
@Suite struct RecoveryLeaseTests {
    @Test func aSecondHolderIsBusyEvenFromAnotherStoreInstanceAndTheLockFileStays() throws {
        let scratch = try ScratchDirectory()
        let first = try AgentStructuredRecoveryStore(directory: scratch.storeURL)
        let second = try AgentStructuredRecoveryStore(directory: scratch.storeURL)
        let id = UUID()
        var lease: RecoveryLease? = try first.testPartition().lease(id)
        #expect(lease?.operationID == id)

        let sameStore = #expect(throws: AgentRecoveryError.self) { try first.testPartition().lease(id) }
        #expect(sameStore?.code == .operationBusy)
        #expect(sameStore?.operationID == id)
        let otherStore = #expect(throws: AgentRecoveryError.self) { try second.testPartition().lease(id) }
        #expect(otherStore?.code == .operationBusy)
        #expect(try second.testPartition().isLeaseHeld(id))

        lease = nil
        #expect(try !second.testPartition().isLeaseHeld(id))
        let again = try second.testPartition().lease(id)
        try again.verify()
        let lockPath = first.recordURL(id, suffix: ".lock").path
        #expect(FileManager.default.fileExists(atPath: lockPath))
        #expect(RecoveryTestRecords.mode(lockPath) == 0o600)
    }

    @Test func aReplacedOrRemovedLockFileFailsClosed() throws {
        let scratch = try ScratchDirectory()
        let store = try AgentStructuredRecoveryStore(directory: scratch.storeURL)
        let id = UUID()
        let lease = try store.testPartition().lease(id)
        let lockURL = store.recordURL(id, suffix: ".lock")

        try FileManager.default.removeItem(at: lockURL)
        let removed = #expect(throws: AgentRecoveryError.self) { try lease.verify() }
        #expect(removed?.code == .insecureStore)

        // A new lock file at the same path is another inode: a second process could lock it, so the
        // old holder must stop.
        let newcomer = try store.testPartition().lease(id)
        let replaced = #expect(throws: AgentRecoveryError.self) { try lease.verify() }
        #expect(replaced?.code == .insecureStore)
        #expect(replaced?.message.contains("replaced") == true)
        try newcomer.verify()
    }

    @Test func leaseDescriptorsAreCloseOnExec() throws {
        let scratch = try ScratchDirectory()
        let store = try AgentStructuredRecoveryStore(directory: scratch.storeURL)
        let lease = try store.testPartition().lease(UUID())
        let flags = try fileDescriptorFlags(lease.descriptor)
        #expect(flags & 0o2_000_000 != 0)  // O_CLOEXEC
        #expect(flags & 0o2 != 0)  // O_RDWR
        let rootFlags = try fileDescriptorFlags(store.root.descriptor)
        #expect(rootFlags & 0o2_000_000 != 0)
    }

    /// A child forked (without exec) while a lock is held shares the lock's open file description; the
    /// lease, the control lock and the quota lock must still be free the moment they are released, or a
    /// host that spawns processes sees `operation_busy` for as long as its children take to exec.
    @Test func everyLockIsFreeOnReleaseWhileAForkedChildStillSharesItsDescriptor() throws {
        let scratch = try ScratchDirectory()
        let store = try AgentStructuredRecoveryStore(directory: scratch.storeURL)
        let partition = try store.testPartition()
        let id = UUID()

        var lease: RecoveryLease? = try partition.lease(id)
        #expect(lease?.operationID == id)
        let leaseChild = try ForkedChild()
        lease = nil
        #expect(try ForkedChild.lockIsFree(store.recordURL(id, suffix: ".lock").path))
        #expect(try !partition.isLeaseHeld(id))
        let again = try partition.lease(id)
        #expect(again.operationID == id)
        #expect(leaseChild.finish() == 0)

        var controlChild: ForkedChild?
        try partition.withControlLock(id) { () throws(AgentRecoveryError) in
            controlChild = try? ForkedChild()
        }
        #expect(try ForkedChild.lockIsFree(store.recordURL(id, suffix: ".control.lock").path))
        #expect(controlChild?.finish() == 0)

        var quotaChild: ForkedChild?
        try store.withQuotaLock { (_: inout QuotaLedger) throws(AgentRecoveryError) in
            quotaChild = try? ForkedChild()
        }
        #expect(try ForkedChild.lockIsFree(scratch.storeURL.appendingPathComponent("quota.lock").path))
        #expect(quotaChild?.finish() == 0)
    }

    /// The `flags:` field of `/proc/self/fdinfo/<fd>` (octal).
    private func fileDescriptorFlags(_ descriptor: Int32) throws -> Int {
        let text = try String(contentsOfFile: "/proc/self/fdinfo/\(descriptor)", encoding: .utf8)
        let line = text.split(separator: "\n").first { $0.hasPrefix("flags:") }
        return Int(line?.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "", radix: 8) ?? -1
    }
}
