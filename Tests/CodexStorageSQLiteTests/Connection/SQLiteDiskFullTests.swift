import CodexCore
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Glibc
import Testing

/// A full disk: the store on a 1 MiB tmpfs (needs root to mount; otherwise the test prints why it did
/// nothing) fails with a typed error, loses nothing committed, and works again once space returns.
@Suite(.serialized, .timeLimit(.minutes(3 * Sanitizer.slowdown))) struct SQLiteDiskFullTests {
    @Test func aFullDiskIsATypedErrorAndTheStoreRecoversWhenSpaceReturns() async throws {
        guard geteuid() == 0 else {
            print("SQLiteDiskFullTests: skipped: mounting a size-limited tmpfs needs root (euid \(geteuid()))")
            return
        }
        let mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-tmpfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        let mounted = try await ChildProcess.run(URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint.path])
        guard mounted.status == 0 else {
            print("SQLiteDiskFullTests: skipped: mount failed: \(mounted.stderr)")
            return
        }
        defer {
            _ = umount2(mountPoint.path, Int32(MNT_DETACH))
            try? FileManager.default.removeItem(at: mountPoint)
        }
        let path = mountPoint.appendingPathComponent("state.sqlite").path
        let store = try SQLiteRuntimeStateStore(path: path)
        let thread = AgentThread()
        try await store.upsertThread(thread)
        var committed = 0
        var failure: (any Error)?
        let filler = String(repeating: "x", count: 2_000)
        while failure == nil, committed < 10_000 {
            do {
                try await store.appendHistory([.message(AgentMessage(threadID: thread.id, role: .user, text: "\(committed) \(filler)"))], to: thread.id)
                committed += 1
            } catch {
                failure = error
            }
        }
        let typed = failure as? SQLiteStoreError
        #expect(typed?.code == .diskFull, "\(String(describing: failure))")
        #expect(typed?.message.hasSuffix(" on \(path): No space left on device") == true, "the message names the file and the cause: \(typed?.message ?? "")")
        let runtimeError = AgentRuntimeError.stateStore(try #require(failure))
        #expect(runtimeError.message.hasPrefix("the state store failed: sqlite_disk_full: "), "\(runtimeError.message)")
        #expect(runtimeError.message.contains(path))
        #expect(committed > 20)
        // Nothing committed is lost, and reads still work on the full disk.
        #expect(try await store.history(of: thread.id, query: .init(limit: 100_000)).items.count == committed)
        // Space returns: the same store appends again.
        let grown = try await ChildProcess.run(URL(fileURLWithPath: "/bin/mount"), ["-o", "remount,size=8m", mountPoint.path])
        #expect(grown.status == 0, "\(grown.stderr)")
        try await store.appendHistory([.message(AgentMessage(threadID: thread.id, role: .user, text: "after"))], to: thread.id)
        #expect(try await store.history(of: thread.id, query: .init(limit: 100_000)).items.count == committed + 1)
        #expect(try await store.integrityCheck() == ["ok"])
    }
}
