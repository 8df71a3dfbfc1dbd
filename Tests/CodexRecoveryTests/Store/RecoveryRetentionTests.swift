@testable import CodexRecovery
import Foundation
import Testing

/// Inventory, purge and cleanup: per account and scope, never touching a leased or unreadable operation,
/// never deleting lock files.
@Suite struct RecoveryRetentionTests {
    @Test func inventoryListsUnreadableRecordsInsteadOfFailing() throws {
        let scratch = try ScratchDirectory()
        let store = try AgentStructuredRecoveryStore(directory: scratch.storeURL)
        let partition = try store.testPartition()
        let good = [RecoveryTestRecords.operation(), RecoveryTestRecords.operation(), RecoveryTestRecords.operation()]
        for record in good { try partition.save(record) }
        let broken = RecoveryTestRecords.operation()
        try partition.save(broken)
        let brokenURL = store.recordURL(broken.operationID)
        try Data("{\"version\":2,".utf8).write(to: brokenURL)
        try store.testPartition(scope: "campaign-7").save(RecoveryTestRecords.operation(scope: "campaign-7"))
        try store.testPartition(binding: RecoveryTestRecords.otherBinding).save(RecoveryTestRecords.operation(binding: RecoveryTestRecords.otherBinding))

        let all = try store.inventory(binding: RecoveryTestRecords.binding)
        #expect(all.operationIDs.count == 4)
        #expect(Set(good.map(\.operationID)).isSubset(of: Set(all.operationIDs)))
        #expect(all.unreadableOperationIDs == [broken.operationID])
        #expect(try store.inventory(binding: RecoveryTestRecords.binding, scope: "campaign-7").operationIDs.count == 1)
        #expect(try store.inventory(binding: RecoveryTestRecords.otherBinding).operationIDs.count == 1)
        #expect(try store.inventory(binding: "chatgpt:nobody").operationIDs.isEmpty)
        #expect(try Data(contentsOf: brokenURL) == Data("{\"version\":2,".utf8))
    }

    @Test func purgeRemovesIdleOperationsOfOneAccountAndReportsBusyAndUnreadableOnes() throws {
        let scratch = try ScratchDirectory()
        let store = try AgentStructuredRecoveryStore(directory: scratch.storeURL)
        let partition = try store.testPartition()
        let idle = RecoveryTestRecords.operation()
        let busy = RecoveryTestRecords.operation()
        let broken = RecoveryTestRecords.operation()
        for record in [idle, busy, broken] { try partition.save(record) }
        try Data("garbage".utf8).write(to: store.recordURL(broken.operationID))
        let other = RecoveryTestRecords.operation(binding: RecoveryTestRecords.otherBinding)
        try store.testPartition(binding: RecoveryTestRecords.otherBinding).save(other)
        let held = try partition.lease(busy.operationID)

        let result = try store.purgeAccount(RecoveryTestRecords.binding)
        #expect(result.removed == [idle.operationID])
        #expect(result.skipped == [busy.operationID: .busy, broken.operationID: .unreadable])
        #expect(!FileManager.default.fileExists(atPath: store.recordURL(idle.operationID).path))
        #expect(FileManager.default.fileExists(atPath: store.recordURL(idle.operationID, suffix: ".lock").path))
        #expect(try partition.load(RecoveryOperationRecord.self, busy.operationID) == busy)
        #expect(try Data(contentsOf: store.recordURL(broken.operationID)) == Data("garbage".utf8))
        #expect(try store.inventory(binding: RecoveryTestRecords.otherBinding).operationIDs == [other.operationID])
        withExtendedLifetime(held) {}
    }

    @Test func cleanupRemovesOnlyOldDispositionsWhoseContentIsGone() throws {
        let scratch = try ScratchDirectory()
        let store = try AgentStructuredRecoveryStore(directory: scratch.storeURL)
        let partition = try store.testPartition()
        let old = UUID()
        let recent = UUID()
        let unfinished = RecoveryTestRecords.operation(state: .completed, completedPayload: #"{"ok":true}"#)
        let cutoff = Date(timeIntervalSince1970: 1_900_000_000)
        for (id, date) in [(old, cutoff - 10), (recent, cutoff + 10), (unfinished.operationID, cutoff - 10)] {
            try partition.save(RecoveryDispositionRecord(operationID: id, binding: RecoveryTestRecords.binding, state: .acknowledged, disposedAt: date))
        }
        // Acknowledgement wrote its marker but has not removed the record yet.
        try partition.save(unfinished)
        try partition.save(RecoveryControlRecord(operationID: old, runID: UUID(), command: .active, updatedAt: cutoff - 20))

        let result = try store.cleanupDisposed(before: cutoff, for: RecoveryTestRecords.binding)
        #expect(result.removed == [old])
        #expect(result.skipped.isEmpty)
        #expect(try partition.load(RecoveryDispositionRecord.self, old) == nil)
        #expect(try partition.load(RecoveryControlRecord.self, old) == nil)
        #expect(try partition.load(RecoveryDispositionRecord.self, recent)?.state == .acknowledged)
        #expect(try partition.load(RecoveryOperationRecord.self, unfinished.operationID) == unfinished)
        #expect(try store.cleanupDisposed(before: cutoff, for: RecoveryTestRecords.otherBinding) == AgentRecoveryCleanupResult())
    }
}

/// Symbolic links in place of the store's own directories are refused, never followed.
@Suite struct RecoverySymlinkedDirectoryTests {
    @Test func aSymlinkedAccountDirectoryIsRefusedAndNothingOutsideIsTouched() throws {
        let scratch = try ScratchDirectory()
        let store = try AgentStructuredRecoveryStore(directory: scratch.storeURL)
        let record = RecoveryTestRecords.operation()
        try store.testPartition().save(record)
        let account = scratch.storeURL.appendingPathComponent(AgentStructuredRecoveryStore.bindingKey(RecoveryTestRecords.binding))
        let elsewhere = scratch.url.appendingPathComponent("elsewhere")
        try FileManager.default.moveItem(at: account, to: elsewhere)
        try FileManager.default.createSymbolicLink(at: account, withDestinationURL: elsewhere)
        // The inventory reports the hostile entry by its path (it does not follow it, nor fail the whole call).
        let inventory = try store.inventory(binding: RecoveryTestRecords.binding)
        #expect(inventory.operationIDs.isEmpty)
        #expect(inventory.problems.map(\.path) == [AgentStructuredRecoveryStore.bindingKey(RecoveryTestRecords.binding)])
        #expect(inventory.problems.map(\.code) == [.insecureStore])
        let save = #expect(throws: AgentRecoveryError.self) { try store.testPartition().save(RecoveryTestRecords.operation()) }
        #expect(save?.code == .insecureStore)
        let moved = elsewhere.appendingPathComponent(AgentStructuredRecoveryStore.scopeKey(nil))
        #expect(try FileManager.default.contentsOfDirectory(atPath: moved.path) == [record.operationID.uuidString.lowercased() + ".json"])
    }
}
