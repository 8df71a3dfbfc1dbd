package import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive operation lease: `flock(LOCK_EX | LOCK_NB)` on the operation's lock file, which is never
/// deleted so every process locks the same inode. `flock` belongs to the open file description, so a
/// second store instance in the same process is refused too, and the lease ends when the holder exits
/// or is killed. The descriptor is `O_CLOEXEC`, so a child process never inherits the lease, and a
/// released lease is unlocked before its descriptor closes, so a child being spawned by another thread
/// (which shares every open file description until it execs) does not keep it held.
///
/// Acquisition retries for up to 25 ms before reporting `operation_busy`, because a holder in another
/// process may be releasing it at that moment.
///
/// Unlocking frees the lease for every process sharing the descriptor's open file description: a host
/// that forks without exec must not release, in the child, a lease the parent still holds.
///
/// Before each mutation the holder calls ``verify()``: when the lock file was unlinked or replaced,
/// another process could lock the new inode, so the lease fails closed.
package final class RecoveryLease: Sendable {
    /// The operation the lease is for.
    package let operationID: UUID
    private let directory: RecoveryDirectory
    private let name: String
    let descriptor: Int32
    private let inode: UInt64
    private let device: UInt64

    init(operationID: UUID, directory: RecoveryDirectory, name: String) throws(AgentRecoveryError) {
        let fileSystem = directory.fileSystem
        let fd: Int32
        do {
            fd = try fileSystem.openFile(in: directory.descriptor, name: name, flags: O_RDWR | O_CREAT, mode: 0o600)
        } catch {
            var failure = RecoveryDirectory.failure(error, "cannot open an operation lock file")
            failure.operationID = operationID
            throw failure
        }
        let info: stat
        do {
            info = try Self.lock(fd, fileSystem: fileSystem, operationID: operationID)
            try Self.verify(directory: directory, name: name, inode: UInt64(info.st_ino), device: UInt64(info.st_dev), operationID: operationID)
        } catch {
            fileSystem.release(fd)
            throw error
        }
        // Every check passed: only now does the instance own the descriptor (and `deinit` close it).
        self.operationID = operationID
        self.directory = directory
        self.name = name
        self.descriptor = fd
        self.inode = UInt64(info.st_ino)
        self.device = UInt64(info.st_dev)
    }

    private static func lock(_ fd: Int32, fileSystem: any RecoveryFileSystem, operationID: UUID) throws(AgentRecoveryError) -> stat {
        do {
            let info = try fileSystem.status(fd)
            try RecoveryDirectory.checkRegularPrivateFile(info)
            // A holder in another process may be releasing the lease at this moment (or one that frees
            // it by closing alone, as versions before the unlock did, while a child it is spawning still
            // shares the descriptor): retry for up to 25 ms before reporting busy.
            var waited = 0
            while try !fileSystem.lockExclusively(fd, wait: false) {
                guard waited < 25 else {
                    throw AgentRecoveryError(code: .operationBusy, message: "another execution holds the operation's lease", operationID: operationID)
                }
                usleep(1000)
                waited += 1
            }
            return info
        } catch var failure as AgentRecoveryError {
            failure.operationID = operationID
            throw failure
        } catch let failure as RecoverySystemCallError {
            var mapped = RecoveryDirectory.failure(failure, "cannot lock an operation")
            mapped.operationID = operationID
            throw mapped
        } catch {
            throw AgentRecoveryError(code: .storageFailure, message: "cannot lock an operation", operationID: operationID, underlying: error)
        }
    }

    /// Unlocks before closing: a child process forked by another thread shares the descriptor until it
    /// execs, and a lease freed by `close` alone would stay held until then.
    deinit { directory.fileSystem.release(descriptor) }

    /// Fails closed when the lock file at the path is no longer the inode this lease locked.
    package func verify() throws(AgentRecoveryError) {
        try Self.verify(directory: directory, name: name, inode: inode, device: device, operationID: operationID)
    }

    private static func verify(directory: RecoveryDirectory, name: String, inode: UInt64, device: UInt64, operationID: UUID) throws(AgentRecoveryError) {
        let info: stat
        do {
            info = try directory.fileSystem.status(in: directory.descriptor, name: name)
        } catch {
            var failure = error.errorNumber == ENOENT
                ? AgentRecoveryError(code: .insecureStore, message: "the operation's lock file was removed while held")
                : RecoveryDirectory.failure(error, "cannot inspect the operation's lock file")
            failure.operationID = operationID
            throw failure
        }
        guard UInt64(info.st_ino) == inode, UInt64(info.st_dev) == device else {
            throw AgentRecoveryError(code: .insecureStore, message: "the operation's lock file was replaced while held", operationID: operationID)
        }
    }
}
