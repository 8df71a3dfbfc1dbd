#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file-system seam of a store opened read-only: every call that could change the disk (creating
/// or writing a file, making a directory, renaming, unlinking, changing a mode) fails with `EROFS`
/// before it reaches the real file system, so a bug in a read path cannot write. Reads, listings,
/// `fstat` and lock probes pass through.
struct ReadOnlyRecoveryFileSystem: RecoveryFileSystem {
    let base: any RecoveryFileSystem

    private func refuse(_ operation: RecoveryFileOperation) -> RecoverySystemCallError {
        RecoverySystemCallError(operation, EROFS)
    }

    func openDirectory(path: String) throws(RecoverySystemCallError) -> Int32 { try base.openDirectory(path: path) }
    func openDirectory(in directory: Int32, name: String) throws(RecoverySystemCallError) -> Int32 {
        try base.openDirectory(in: directory, name: name)
    }
    func makeDirectory(in directory: Int32, name: String, mode: mode_t) throws(RecoverySystemCallError) { throw refuse(.makeDirectory) }
    func openFile(in directory: Int32, name: String, flags: Int32, mode: mode_t) throws(RecoverySystemCallError) -> Int32 {
        guard flags & (O_CREAT | O_TRUNC | O_WRONLY | O_RDWR | O_APPEND) == 0 else { throw refuse(.open) }
        return try base.openFile(in: directory, name: name, flags: flags, mode: mode)
    }
    func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(RecoverySystemCallError) -> Int {
        try base.read(descriptor, into: buffer)
    }
    func write(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer) throws(RecoverySystemCallError) -> Int { throw refuse(.write) }
    func sync(_ descriptor: Int32, directory: Bool) throws(RecoverySystemCallError) { throw refuse(directory ? .syncDirectory : .syncFile) }
    func rename(in directory: Int32, from: String, to: String) throws(RecoverySystemCallError) { throw refuse(.rename) }
    func unlink(in directory: Int32, name: String, directory isDirectory: Bool) throws(RecoverySystemCallError) { throw refuse(.unlink) }
    func status(_ descriptor: Int32) throws(RecoverySystemCallError) -> stat { try base.status(descriptor) }
    func status(in directory: Int32, name: String) throws(RecoverySystemCallError) -> stat { try base.status(in: directory, name: name) }
    func lockExclusively(_ descriptor: Int32, wait: Bool) throws(RecoverySystemCallError) -> Bool {
        try base.lockExclusively(descriptor, wait: false)
    }
    func unlock(_ descriptor: Int32) { base.unlock(descriptor) }
    func changeMode(_ descriptor: Int32, to mode: mode_t) throws(RecoverySystemCallError) { throw refuse(.changeMode) }
    func entries(of directory: Int32) throws(RecoverySystemCallError) -> [String] { try base.entries(of: directory) }
    func close(_ descriptor: Int32) { base.close(descriptor) }
}
