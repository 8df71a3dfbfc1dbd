@testable import CodexRecovery
import Foundation
import Glibc
import CodexTestSupport
import Testing

/// The store's directory rules and its durable write protocol, on a real directory, with failures
/// injected through the file-system seam.
@Suite struct RecoveryStoreDurabilityTests {
    @Test func directoriesAre0700FilesAre0600AndAWriteLeavesOnlyTheRecord() throws {
        let scratch = try ScratchDirectory()
        let store = try AgentStructuredRecoveryStore(directory: scratch.storeURL)
        let record = RecoveryTestRecords.operation()
        let partition = try store.testPartition()
        try partition.save(record)

        let url = store.recordURL(record.operationID)
        #expect(RecoveryTestRecords.mode(scratch.storeURL.path) == 0o700)
        #expect(RecoveryTestRecords.mode(url.deletingLastPathComponent().path) == 0o700)
        #expect(RecoveryTestRecords.mode(url.deletingLastPathComponent().deletingLastPathComponent().path) == 0o700)
        #expect(RecoveryTestRecords.mode(url.path) == 0o600)
        // Only the record and the quota lock: no temporary file, no account or scope string in any name.
        let tree = RecoveryTestRecords.tree(scratch.storeURL)
        #expect(tree.count == 4)
        #expect(tree.contains("quota.lock"))
        #expect(tree.allSatisfy { !$0.contains("account") && !$0.hasSuffix(".tmp") })
        #expect(try partition.load(RecoveryOperationRecord.self, record.operationID) == record)
        #expect(try store.usedBytes() == RecoveryTestRecords.bytes(url).count)
    }

    @Test func equalRecordsGiveEqualBytesWithAChecksum() throws {
        let record = RecoveryTestRecords.operation(UUID(uuidString: "00000000-0000-4000-8000-000000000001") ?? UUID())
        let first = try RecoveryRecordCodec.encode(record)
        let second = try RecoveryRecordCodec.encode(record)
        #expect(first == second)
        let text = String(decoding: first, as: UTF8.self)
        #expect(text.hasPrefix(#"{"attempts":[],"attemptsUsed":0,"binding":"chatgpt:account-one","checksum":""#))
        #expect(!text.contains("\n"))
    }

    @Test func aRootAccessibleToOthersIsTightenedAndASymlinkOrForeignRootIsRefused() throws {
        let scratch = try ScratchDirectory()
        #expect(mkdir(scratch.storeURL.path, 0o755) == 0)
        #expect(chmod(scratch.storeURL.path, 0o755) == 0)
        _ = try AgentStructuredRecoveryStore(directory: scratch.storeURL)
        #expect(RecoveryTestRecords.mode(scratch.storeURL.path) == 0o700)

        let link = scratch.url.appendingPathComponent("link")
        #expect(symlink(scratch.storeURL.path, link.path) == 0)
        let linked = #expect(throws: AgentRecoveryError.self) { try AgentStructuredRecoveryStore(directory: link) }
        #expect(linked?.code == .insecureStore)

        let foreign = scratch.url.appendingPathComponent("foreign")
        #expect(mkdir(foreign.path, 0o700) == 0)
        #expect(chown(foreign.path, 65534, 65534) == 0)
        let refused = #expect(throws: AgentRecoveryError.self) { try AgentStructuredRecoveryStore(directory: foreign) }
        #expect(refused?.code == .insecureStore)
        #expect(RecoveryTestRecords.tree(foreign).isEmpty)
    }

    @Test func diskFullOnWriteLeavesNoTraceAndThePreviousRecordIntact() throws {
        let scratch = try ScratchDirectory()
        let faults = FaultInjectingFileSystem()
        let store = try AgentStructuredRecoveryStore(directory: scratch.storeURL, fileSystem: faults)
        let partition = try store.testPartition()
        var record = RecoveryTestRecords.operation()
        try partition.save(record)
        let url = store.recordURL(record.operationID)
        let before = try RecoveryTestRecords.bytes(url)
        let usedBefore = try store.usedBytes()

        record.state = .running
        faults.fail(.write, errno: ENOSPC, persistent: true)
        let error = #expect(throws: AgentRecoveryError.self) { try partition.save(record) }
        #expect(error?.code == .diskFull)
        #expect(error?.systemErrorNumber == ENOSPC)
        #expect(error?.operationID == record.operationID)
        // The failed system call stays underneath.
        #expect((error?.underlying as? RecoverySystemCallError) == RecoverySystemCallError(.write, ENOSPC))
        #expect(try RecoveryTestRecords.bytes(url) == before)
        #expect(RecoveryTestRecords.tree(url.deletingLastPathComponent()) == [url.lastPathComponent])
        #expect(try store.usedBytes() == usedBefore)

        // After space is freed the same write succeeds.
        faults.heal()
        try partition.save(record)
        #expect(try partition.load(RecoveryOperationRecord.self, record.operationID)?.state == .running)
    }

    @Test func aFailedFileSyncIsNeverRenamedAndAFailedDirectorySyncIsReported() throws {
        let scratch = try ScratchDirectory()
        let faults = FaultInjectingFileSystem()
        let store = try AgentStructuredRecoveryStore(directory: scratch.storeURL, fileSystem: faults)
        let partition = try store.testPartition()
        var record = RecoveryTestRecords.operation()
        try partition.save(record)
        let url = store.recordURL(record.operationID)
        let before = try RecoveryTestRecords.bytes(url)

        record.state = .running
        let renamesBefore = faults.calls(.rename)
        faults.fail(.syncFile, errno: EIO)
        let fileSync = #expect(throws: AgentRecoveryError.self) { try partition.save(record) }
        #expect(fileSync?.code == .storageFailure)
        #expect(fileSync?.systemErrorNumber == EIO)
        #expect(faults.calls(.rename) == renamesBefore)
        #expect(try RecoveryTestRecords.bytes(url) == before)
        #expect(RecoveryTestRecords.tree(url.deletingLastPathComponent()) == [url.lastPathComponent])

        // The directory fsync after the rename fails: the new file is visible, but the caller is told
        // its durability is unknown and must not treat the write as done.
        faults.fail(.syncDirectory, errno: EIO)
        let directorySync = #expect(throws: AgentRecoveryError.self) { try partition.save(record) }
        #expect(directorySync?.code == .storageFailure)
        #expect(directorySync?.message.contains("durability is unknown") == true)
        #expect(try partition.load(RecoveryOperationRecord.self, record.operationID)?.state == .running)
    }

    @Test func theQuotaAndThePerRecordLimitAreCheckedBeforeWritingAndNeverEvict() throws {
        let scratch = try ScratchDirectory()
        let probe = try RecoveryRecordCodec.encode(RecoveryTestRecords.operation())
        let recordSize = probe.count
        // Room for exactly two operation records of this size once the lifecycle reserve is set aside.
        var quota = recordSize * 2
        while quota - min(64 * 1024, quota / 8) < recordSize * 2 { quota += 1 }
        #expect(quota - min(64 * 1024, quota / 8) == recordSize * 2)
        let store = try AgentStructuredRecoveryStore(directory: scratch.storeURL, maximumBytes: quota, maximumRecordBytes: recordSize)
        #expect(store.maximumBytes - store.lifecycleReserveBytes == recordSize * 2)
        let partition = try store.testPartition()
        let first = RecoveryTestRecords.operation()
        let second = RecoveryTestRecords.operation()
        try partition.save(first)
        try partition.save(second)
        #expect(try store.usedBytes() == recordSize * 2)

        let third = RecoveryTestRecords.operation()
        let full = #expect(throws: AgentRecoveryError.self) { try partition.save(third) }
        #expect(full?.code == .storageLimitExceeded)
        #expect(full?.operationID == third.operationID)
        #expect(try partition.load(RecoveryOperationRecord.self, third.operationID) == nil)
        #expect(try partition.load(RecoveryOperationRecord.self, first.operationID) == first)
        #expect(try store.usedBytes() == recordSize * 2)

        // Rewriting a record in place counts only the difference.
        var rewritten = first
        rewritten.updatedAt = first.updatedAt
        try partition.save(rewritten)

        // One byte over the per-record limit is refused before any write.
        let big = RecoveryTestRecords.operation(body: RecoveryTestRecords.body(prompt: "Is it fine?x"))
        #expect(try RecoveryRecordCodec.encode(big).count == recordSize + 1)
        try partition.remove(RecoveryOperationRecord.self, second.operationID)
        let tooBig = #expect(throws: AgentRecoveryError.self) { try partition.save(big) }
        // The reserve still takes a lifecycle record although operation records are at their limit.
        try partition.save(RecoveryControlRecord(operationID: first.operationID, runID: UUID(), command: .suspended, updatedAt: Date()))
        #expect(tooBig?.code == .storageLimitExceeded)
        #expect(tooBig?.message.contains("per-record limit") == true)
        // The first record and the control record: the refused write left nothing behind.
        #expect(RecoveryTestRecords.tree(store.recordURL(first.operationID).deletingLastPathComponent()).count == 2)
    }
}

/// Every file and directory the store creates is private whatever the process's umask lets through.
@Suite struct RecoveryStorePermissionTests {
    @Test func everyEntryTheStoreCreatesIs0600Or0700UnderUmask022() throws {
        let previous = umask(0o022)
        defer { umask(previous) }
        let scratch = try ScratchDirectory()
        let store = try AgentStructuredRecoveryStore(directory: scratch.storeURL)
        let record = RecoveryTestRecords.operation()
        let partition = try store.testPartition()
        try partition.save(record)
        let lease = try partition.lease(record.operationID)
        try partition.withControlLock(record.operationID) {}
        withExtendedLifetime(lease) {}
        let entries = DirectorySnapshot(scratch.storeURL.path).entries
        #expect(entries.contains { $0.path.hasSuffix(".lock") && !$0.path.hasSuffix("quota.lock") })
        #expect(entries.contains { $0.path.hasSuffix(".control.lock") })
        for entry in entries {
            #expect(entry.mode == (entry.kind == "directory" ? 0o700 : 0o600), "\(entry.path.isEmpty ? "(store)" : entry.path) is \(String(entry.mode, radix: 8))")
        }
    }
}
