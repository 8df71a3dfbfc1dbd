#if canImport(Glibc)
package import Glibc
#elseif canImport(Musl)
package import Musl
#elseif canImport(Darwin)
package import Darwin
#endif

/// A failed system call: which one and its `errno`.
package struct RecoverySystemCallError: Error, Sendable, Hashable {
    /// The call that failed.
    package var operation: RecoveryFileOperation
    /// Its `errno`.
    package var errorNumber: Int32

    /// Creates a failure.
    /// - Parameters:
    ///   - operation: The call that failed.
    ///   - errorNumber: Its `errno`.
    package init(_ operation: RecoveryFileOperation, _ errorNumber: Int32) {
        self.operation = operation
        self.errorNumber = errorNumber
    }
}

/// The system calls the recovery store makes, named so a test file system can fail one of them.
package enum RecoveryFileOperation: String, Sendable, Hashable, CaseIterable {
    /// `open` / `openat`.
    case open
    /// `mkdirat`.
    case makeDirectory
    /// `read`.
    case read
    /// `write`.
    case write
    /// `fsync` of a file.
    case syncFile
    /// `fsync` of a directory.
    case syncDirectory
    /// `renameat`.
    case rename
    /// `unlinkat`.
    case unlink
    /// `fstat` / `fstatat`.
    case status
    /// `flock`.
    case lock
    /// Reading a directory's entries.
    case listDirectory
    /// `fchmod`.
    case changeMode
}

/// The file-system seam of ``AgentStructuredRecoveryStore``: every system call it makes, relative to
/// directory descriptors it holds. ``PosixRecoveryFileSystem`` is the real one; tests wrap it to fail a
/// chosen call with a chosen `errno` (disk full, `EIO` on `fsync`, …).
///
/// Implementations return descriptors opened with `O_CLOEXEC` and never follow a final symbolic link.
package protocol RecoveryFileSystem: Sendable {
    /// Opens a directory by absolute path (`O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC`).
    func openDirectory(path: String) throws(RecoverySystemCallError) -> Int32
    /// Opens the directory `name` inside `directory` (same flags).
    func openDirectory(in directory: Int32, name: String) throws(RecoverySystemCallError) -> Int32
    /// Creates the directory `name` inside `directory` with `mode`.
    func makeDirectory(in directory: Int32, name: String, mode: mode_t) throws(RecoverySystemCallError)
    /// Opens or creates the file `name` inside `directory`; `O_NOFOLLOW | O_CLOEXEC` are always added.
    func openFile(in directory: Int32, name: String, flags: Int32, mode: mode_t) throws(RecoverySystemCallError) -> Int32
    /// One `read` call; returns the count (0 at end of file).
    func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(RecoverySystemCallError) -> Int
    /// One `write` call; returns the count written.
    func write(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer) throws(RecoverySystemCallError) -> Int
    /// `fsync` of a file (`directory` false) or a directory (`directory` true).
    func sync(_ descriptor: Int32, directory: Bool) throws(RecoverySystemCallError)
    /// `renameat` within one directory.
    func rename(in directory: Int32, from: String, to: String) throws(RecoverySystemCallError)
    /// `unlinkat` (`directory` true removes an empty directory).
    func unlink(in directory: Int32, name: String, directory isDirectory: Bool) throws(RecoverySystemCallError)
    /// `fstat`.
    func status(_ descriptor: Int32) throws(RecoverySystemCallError) -> stat
    /// `fstatat` without following a final symbolic link.
    func status(in directory: Int32, name: String) throws(RecoverySystemCallError) -> stat
    /// `flock(LOCK_EX | LOCK_NB)` (`wait` false) or `flock(LOCK_EX)` (`wait` true); returns `false`
    /// when another open file description holds it and `wait` is false.
    func lockExclusively(_ descriptor: Int32, wait: Bool) throws(RecoverySystemCallError) -> Bool
    /// `flock(LOCK_UN)` (errors ignored). Called before closing a locked descriptor: a child process
    /// forked by another thread shares the descriptor's open file description until it execs, and
    /// `close` alone would leave the lock held until then.
    func unlock(_ descriptor: Int32)
    /// `fchmod`.
    func changeMode(_ descriptor: Int32, to mode: mode_t) throws(RecoverySystemCallError)
    /// The names in a directory, without `.` and `..`.
    func entries(of directory: Int32) throws(RecoverySystemCallError) -> [String]
    /// `close` (errors ignored: the descriptor is gone either way).
    func close(_ descriptor: Int32)
}

extension RecoveryFileSystem {
    /// Unlocks and closes a descriptor that may hold a lock (unlocking one that holds none does
    /// nothing): the one way the store lets go of its lock files' descriptors.
    func release(_ descriptor: Int32) {
        unlock(descriptor)
        close(descriptor)
    }
}

/// The real file system: direct POSIX calls, retried on `EINTR`.
package struct PosixRecoveryFileSystem: RecoveryFileSystem {
    /// Creates it.
    package init() {}

    /// See ``RecoveryFileSystem/openDirectory(path:)``.
    package func openDirectory(path: String) throws(RecoverySystemCallError) -> Int32 {
        try Self.retrying(.open) { open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
    }

    /// See ``RecoveryFileSystem/openDirectory(in:name:)``.
    package func openDirectory(in directory: Int32, name: String) throws(RecoverySystemCallError) -> Int32 {
        try Self.retrying(.open) { openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
    }

    /// See ``RecoveryFileSystem/makeDirectory(in:name:mode:)``.
    package func makeDirectory(in directory: Int32, name: String, mode: mode_t) throws(RecoverySystemCallError) {
        _ = try Self.retrying(.makeDirectory) { mkdirat(directory, name, mode) }
    }

    /// See ``RecoveryFileSystem/openFile(in:name:flags:mode:)``.
    package func openFile(in directory: Int32, name: String, flags: Int32, mode: mode_t) throws(RecoverySystemCallError) -> Int32 {
        try Self.retrying(.open) { openat(directory, name, flags | O_NOFOLLOW | O_CLOEXEC, mode) }
    }

    /// See ``RecoveryFileSystem/read(_:into:)``.
    package func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(RecoverySystemCallError) -> Int {
        try Self.retrying(.read) { systemRead(descriptor, buffer.baseAddress, buffer.count) }
    }

    /// See ``RecoveryFileSystem/write(_:from:)``.
    package func write(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer) throws(RecoverySystemCallError) -> Int {
        try Self.retrying(.write) { systemWrite(descriptor, buffer.baseAddress, buffer.count) }
    }

    /// See ``RecoveryFileSystem/sync(_:directory:)``. A failed `fsync` is reported, never retried.
    package func sync(_ descriptor: Int32, directory: Bool) throws(RecoverySystemCallError) {
        guard fsync(descriptor) == 0 else { throw RecoverySystemCallError(directory ? .syncDirectory : .syncFile, errno) }
    }

    /// See ``RecoveryFileSystem/rename(in:from:to:)``.
    package func rename(in directory: Int32, from: String, to: String) throws(RecoverySystemCallError) {
        _ = try Self.retrying(.rename) { renameat(directory, from, directory, to) }
    }

    /// See ``RecoveryFileSystem/unlink(in:name:directory:)``.
    package func unlink(in directory: Int32, name: String, directory isDirectory: Bool) throws(RecoverySystemCallError) {
        _ = try Self.retrying(.unlink) { unlinkat(directory, name, isDirectory ? AT_REMOVEDIR : 0) }
    }

    /// See ``RecoveryFileSystem/status(_:)``.
    package func status(_ descriptor: Int32) throws(RecoverySystemCallError) -> stat {
        var info = stat()
        _ = try Self.retrying(.status) { fstat(descriptor, &info) }
        return info
    }

    /// See ``RecoveryFileSystem/status(in:name:)``.
    package func status(in directory: Int32, name: String) throws(RecoverySystemCallError) -> stat {
        var info = stat()
        _ = try Self.retrying(.status) { fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) }
        return info
    }

    /// See ``RecoveryFileSystem/lockExclusively(_:wait:)``.
    package func lockExclusively(_ descriptor: Int32, wait: Bool) throws(RecoverySystemCallError) -> Bool {
        while flock(descriptor, wait ? LOCK_EX : LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK, !wait { return false }
            throw RecoverySystemCallError(.lock, errno)
        }
        return true
    }

    /// See ``RecoveryFileSystem/unlock(_:)``.
    package func unlock(_ descriptor: Int32) {
        while flock(descriptor, LOCK_UN) != 0, errno == EINTR {}
    }

    /// See ``RecoveryFileSystem/changeMode(_:to:)``.
    package func changeMode(_ descriptor: Int32, to mode: mode_t) throws(RecoverySystemCallError) {
        _ = try Self.retrying(.changeMode) { fchmod(descriptor, mode) }
    }

    /// See ``RecoveryFileSystem/entries(of:)``.
    package func entries(of directory: Int32) throws(RecoverySystemCallError) -> [String] {
        let copy = dup(directory)
        guard copy >= 0 else { throw RecoverySystemCallError(.listDirectory, errno) }
        guard let stream = fdopendir(copy) else {
            let code = errno
            systemClose(copy)
            throw RecoverySystemCallError(.listDirectory, code)
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw RecoverySystemCallError(.listDirectory, errno) }
                return names
            }
            // The kernel sizes each record to its name (d_reclen): read the name up to its NUL in place,
            // never the whole 256-byte `d_name` field, which can run past the end of the mapped buffer.
            guard let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name) else { continue }
            let name = String(cString: (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self))
            if name != ".", name != ".." { names.append(name) }
        }
    }

    /// See ``RecoveryFileSystem/close(_:)``.
    package func close(_ descriptor: Int32) {
        systemClose(descriptor)
    }

    private static func retrying<R: BinaryInteger>(_ operation: RecoveryFileOperation, _ call: () -> R) throws(RecoverySystemCallError) -> R {
        while true {
            let result = call()
            if result >= 0 { return result }
            if errno == EINTR { continue }
            throw RecoverySystemCallError(operation, errno)
        }
    }
}

// File-scope wrappers: inside the type, `read`, `write` and `close` name its own methods.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

private func systemClose(_ descriptor: Int32) {
    _ = close(descriptor)
}
