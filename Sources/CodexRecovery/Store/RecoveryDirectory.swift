import CodexCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An open directory of the store, with the store's durable file protocol relative to its
/// descriptor (no path re-resolution): temporary file created `O_CREAT | O_EXCL | O_NOFOLLOW |
/// O_CLOEXEC` 0600, full write, `fsync`, `renameat`, `fsync` of the directory. The descriptor is closed
/// when the value is released.
final class RecoveryDirectory: Sendable {
    let fileSystem: any RecoveryFileSystem
    let descriptor: Int32

    init(fileSystem: any RecoveryFileSystem, descriptor: Int32) {
        self.fileSystem = fileSystem
        self.descriptor = descriptor
    }

    deinit { fileSystem.close(descriptor) }

    /// Opens (creating with 0700 if missing) the subdirectory `name`, refusing a symbolic link.
    func subdirectory(_ name: String, create: Bool) throws(AgentRecoveryError) -> RecoveryDirectory? {
        do {
            return RecoveryDirectory(fileSystem: fileSystem, descriptor: try fileSystem.openDirectory(in: descriptor, name: name))
        } catch where error.errorNumber == ENOENT {
            guard create else { return nil }
        } catch {
            throw Self.failure(error, "cannot open a store directory")
        }
        do {
            try fileSystem.makeDirectory(in: descriptor, name: name, mode: 0o700)
        } catch where error.errorNumber == EEXIST {
            // Another process created it first.
        } catch {
            throw Self.failure(error, "cannot create a store directory")
        }
        do {
            try fileSystem.sync(descriptor, directory: true)
            let child = RecoveryDirectory(fileSystem: fileSystem, descriptor: try fileSystem.openDirectory(in: descriptor, name: name))
            try child.checkOwnedAndPrivate(repair: true)
            return child
        } catch let error as RecoverySystemCallError {
            throw Self.failure(error, "cannot open a store directory")
        } catch let error as AgentRecoveryError {
            throw error
        } catch {
            throw AgentRecoveryError(code: .storageFailure, message: "cannot open a store directory", underlying: error)
        }
    }

    /// Refuses a directory owned by another user; tightens group/other access to 0700 when `repair`.
    func checkOwnedAndPrivate(repair: Bool) throws {
        let info = try fileSystem.status(descriptor)
        guard info.st_uid == geteuid() else {
            throw AgentRecoveryError(code: .insecureStore, message: "a store directory is owned by another user")
        }
        if info.st_mode & 0o077 != 0 {
            guard repair else { throw AgentRecoveryError(code: .insecureStore, message: "a store directory is accessible to other users") }
            try fileSystem.changeMode(descriptor, to: 0o700)
        }
    }

    /// Writes `bytes` to `name` durably, replacing any previous file. On any failure before the rename
    /// the temporary file is removed and the previous file is untouched; a failed directory `fsync`
    /// after the rename is reported (the new file may be visible but is not known to be durable).
    func writeDurably(_ name: String, _ bytes: [UInt8]) throws(AgentRecoveryError) {
        let temporary = ".\(name).\(UInt64.random(in: 0...UInt64.max)).tmp"
        let fd: Int32
        do {
            fd = try fileSystem.openFile(in: descriptor, name: temporary, flags: O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
        } catch {
            throw Self.failure(error, "cannot create a temporary record file")
        }
        do {
            try fileSystem.changeMode(fd, to: 0o600)
            try writeAll(fd, bytes)
            try fileSystem.sync(fd, directory: false)
            fileSystem.close(fd)
        } catch {
            fileSystem.close(fd)
            try? fileSystem.unlink(in: descriptor, name: temporary, directory: false)
            throw Self.failure(error, "cannot write a record file")
        }
        do {
            try fileSystem.rename(in: descriptor, from: temporary, to: name)
        } catch {
            try? fileSystem.unlink(in: descriptor, name: temporary, directory: false)
            throw Self.failure(error, "cannot move a record file into place")
        }
        do {
            try fileSystem.sync(descriptor, directory: true)
        } catch {
            throw Self.failure(error, "cannot sync the store directory after a write; the record's durability is unknown")
        }
    }

    /// The bytes of the regular file `name`, or `nil` when it does not exist. Refuses symbolic links,
    /// special files, files with more than one link, files of another owner and files over `limit`.
    func read(_ name: String, limit: Int) throws(AgentRecoveryError) -> [UInt8]? {
        let fd: Int32
        do {
            fd = try fileSystem.openFile(in: descriptor, name: name, flags: O_RDONLY | O_NONBLOCK, mode: 0)
        } catch where error.errorNumber == ENOENT {
            return nil
        } catch where error.errorNumber == ELOOP {
            throw AgentRecoveryError(code: .insecureStore, message: "a record file is a symbolic link", systemErrorNumber: ELOOP)
        } catch {
            throw Self.failure(error, "cannot open a record file")
        }
        defer { fileSystem.close(fd) }
        do {
            let info = try fileSystem.status(fd)
            try Self.checkRegularPrivateFile(info)
            guard Int(info.st_size) <= limit else {
                throw AgentRecoveryError(code: .recordCorrupt, message: "a record file is larger than the per-record limit")
            }
            var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
            var total = 0
            while total < bytes.count {
                let count = try bytes.withUnsafeMutableBytes { buffer throws(RecoverySystemCallError) in
                    try fileSystem.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]))
                }
                if count == 0 { break }
                total += count
            }
            guard total <= limit else {
                throw AgentRecoveryError(code: .recordCorrupt, message: "a record file is larger than the per-record limit")
            }
            return Array(bytes[0..<total])
        } catch let error as AgentRecoveryError {
            throw error
        } catch let error as RecoverySystemCallError {
            throw Self.failure(error, "cannot read a record file")
        } catch {
            throw AgentRecoveryError(code: .storageFailure, message: "cannot read a record file", underlying: error)
        }
    }

    /// Removes `name` (nothing happens when it is missing) and syncs the directory.
    func remove(_ name: String) throws(AgentRecoveryError) {
        do {
            try fileSystem.unlink(in: descriptor, name: name, directory: false)
        } catch where error.errorNumber == ENOENT {
            return
        } catch {
            throw Self.failure(error, "cannot remove a record file")
        }
        do {
            try fileSystem.sync(descriptor, directory: true)
        } catch {
            throw Self.failure(error, "cannot sync the store directory after a removal")
        }
    }

    /// The entry names of this directory.
    func entries() throws(AgentRecoveryError) -> [String] {
        do {
            return try fileSystem.entries(of: descriptor)
        } catch {
            throw Self.failure(error, "cannot list a store directory")
        }
    }

    /// The size of the regular file `name`, or `nil` when it is missing or not a regular file.
    func regularFileSize(_ name: String) throws(AgentRecoveryError) -> Int? {
        do {
            let info = try fileSystem.status(in: descriptor, name: name)
            return (info.st_mode & S_IFMT) == S_IFREG ? Int(info.st_size) : nil
        } catch where error.errorNumber == ENOENT {
            return nil
        } catch {
            throw Self.failure(error, "cannot inspect a record file")
        }
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(RecoverySystemCallError) {
        let failure: RecoverySystemCallError? = bytes.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                do throws(RecoverySystemCallError) {
                    let count = try fileSystem.write(fd, from: UnsafeRawBufferPointer(rebasing: buffer[written...]))
                    // A zero-byte write of a non-empty buffer cannot make progress: treat it as a full disk.
                    guard count > 0 else { return RecoverySystemCallError(.write, ENOSPC) }
                    written += count
                } catch {
                    return error
                }
            }
            return nil
        }
        if let failure { throw failure }
    }

    static func checkRegularPrivateFile(_ info: stat) throws(AgentRecoveryError) {
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw AgentRecoveryError(code: .insecureStore, message: "a record path is not a regular file")
        }
        guard info.st_nlink == 1 else {
            throw AgentRecoveryError(code: .insecureStore, message: "a record file has more than one link")
        }
        guard info.st_uid == geteuid() else {
            throw AgentRecoveryError(code: .insecureStore, message: "a record file is owned by another user")
        }
    }

    /// Maps a failed call to the store's typed error: `disk_full` for `ENOSPC`/`EDQUOT`,
    /// `insecure_store` for a symbolic link where a directory was expected, else `storage_failure`.
    static func failure(_ error: RecoverySystemCallError, _ message: String) -> AgentRecoveryError {
        switch error.errorNumber {
        case ENOSPC, EDQUOT:
            return AgentRecoveryError(code: .diskFull, message: message + ": the file system is full", systemErrorNumber: error.errorNumber, underlying: error)
        case ELOOP:
            return AgentRecoveryError(code: .insecureStore, message: message + ": a symbolic link is in the way", systemErrorNumber: error.errorNumber, underlying: error)
        case ENOTDIR where error.operation == .open:
            return AgentRecoveryError(code: .insecureStore, message: message + ": a symbolic link or non-directory is in the way", systemErrorNumber: error.errorNumber, underlying: error)
        default:
            return AgentRecoveryError(code: .storageFailure, message: message, systemErrorNumber: error.errorNumber, underlying: error)
        }
    }
}
