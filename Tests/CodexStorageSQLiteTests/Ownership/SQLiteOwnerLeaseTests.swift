import CodexCore
@testable import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// Runtime owner leases: held while the lease lives, free once it is released, seen from another store
/// instance (as from another process), slots reused so the files stay few.
@Suite struct SQLiteOwnerLeaseTests {
    @Test func aLeaseIsHeldWhileItLivesAndItsSlotIsReusedAfterwards() throws {
        let scratch = try SQLiteOpenModeTests.Scratch()
        let path = scratch.path("state.sqlite")
        let first = try SQLiteRuntimeStateStore(path: path)
        let second = try SQLiteRuntimeStateStore(path: path)
        var lease = try first.acquireOwnerLease()
        let owner = try #require(lease?.ownerID)
        #expect(try second.isOwnerLeaseHeld(owner))
        #expect(try first.isOwnerLeaseHeld(owner))
        let other = try #require(try second.acquireOwnerLease())
        #expect(other.ownerID != owner)
        #expect(try first.isOwnerLeaseHeld(other.ownerID))
        #expect(DirectorySnapshot(path + ".owners").paths == ["", "slot-0.lock", "slot-1.lock"])

        lease = nil
        #expect(try !second.isOwnerLeaseHeld(owner))
        let reused = try #require(try second.acquireOwnerLease())
        #expect(try second.isOwnerLeaseHeld(reused.ownerID))
        #expect(DirectorySnapshot(path + ".owners").paths == ["", "slot-0.lock", "slot-1.lock"], "the freed slot was reused")
        #expect(try !first.isOwnerLeaseHeld("never-seen"))
        withExtendedLifetime((other, reused)) {}
    }

    /// A child forked (without exec) while the lease is held shares its slot's open file description; the
    /// owner must still read as gone the moment the lease is released, or a successor would wait for a
    /// runtime that has ended.
    @Test func aReleasedLeaseIsFreeWhileAForkedChildStillSharesItsDescriptor() throws {
        let scratch = try SQLiteOpenModeTests.Scratch()
        let path = scratch.path("state.sqlite")
        let store = try SQLiteRuntimeStateStore(path: path)
        var lease = try store.acquireOwnerLease()
        let owner = try #require(lease?.ownerID)
        let child = try ForkedChild()
        #expect(try !ForkedChild.lockIsFree(path + ".owners/slot-0.lock"))
        lease = nil
        #expect(try ForkedChild.lockIsFree(path + ".owners/slot-0.lock"))
        #expect(try !store.isOwnerLeaseHeld(owner))
        #expect(child.finish() == 0)
    }

    @Test func askingWritesNothingAndWorksReadOnly() async throws {
        let scratch = try SQLiteOpenModeTests.Scratch()
        let path = scratch.path("state.sqlite")
        _ = try await SQLiteOpenModeTests.populatedStore(at: path)
        let writer = try SQLiteRuntimeStateStore(path: path)
        let lease = try #require(try writer.acquireOwnerLease())
        let before = DirectorySnapshot(scratch.directory)
        let reader = try SQLiteRuntimeStateStore(readingAt: path)
        #expect(try reader.isOwnerLeaseHeld(lease.ownerID))
        #expect(try !reader.isOwnerLeaseHeld(UUID().uuidString))
        #expect(DirectorySnapshot(scratch.directory).differences(from: before) == [])
    }
}
