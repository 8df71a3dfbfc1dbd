import CodexCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The database file as the file system sees it, checked before SQLite touches it: whether it exists,
/// what its header says, and (for writing) creating it private and tightening a file others can read.
///
/// SQLite creates a missing file, and its `-wal` and `-shm` companions, with the process's default
/// permissions (0644 under umask 022) and gives the companions the main file's mode. Creating the main
/// file first, 0600, keeps all three private.
struct SQLiteDatabaseFile {
    /// The path as given.
    let path: String

    /// What is at the path.
    enum State: Equatable {
        /// Nothing; `parentExists` tells a missing file from a missing directory.
        case missing(parentExists: Bool)
        /// Something that is not a regular file (a directory, a FIFO, a device).
        case notRegularFile
        /// A regular file of zero bytes.
        case empty
        /// A regular file with content; `walMode` when its header says write-ahead logging.
        case file(walMode: Bool)
    }

    /// The file's identity and last change, to notice a writer between two looks.
    struct Identity: Equatable {
        let device: UInt64
        let inode: UInt64
        let size: Int64
        let modifiedSeconds: Int
        let modifiedNanoseconds: Int
    }

    /// What is at the path now. Reads at most the 100-byte header; follows symbolic links.
    func state() throws(SQLiteStoreError) -> State {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            guard code == ENOENT || code == ENOTDIR else { throw failure("inspect", code) }
            let parent = FilePathText.parent(of: path)
            var parentInfo = stat()
            let parentExists = stat(parent.isEmpty ? "." : parent, &parentInfo) == 0 && (parentInfo.st_mode & S_IFMT) == S_IFDIR
            return .missing(parentExists: parentExists)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .notRegularFile }
        guard info.st_size > 0 else { return .empty }
        guard faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) == 0 else { throw failure("open", errno) }
        // Never a descriptor of our own: closing it would drop the locks of this process's connections.
        let header = try SQLiteConnection.header(of: path, count: 20)
        // Bytes 18 and 19 are the write and read format versions: 2 means WAL.
        return .file(walMode: info.st_size >= 20 && header[18] == 2 && header[19] == 2)
    }

    /// The identity of the file, or `nil` when it cannot be read.
    func identity() -> Identity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
        let modified = info.st_mtimespec
        #else
        let modified = info.st_mtim
        #endif
        return Identity(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modifiedSeconds: Int(modified.tv_sec), modifiedNanoseconds: Int(modified.tv_nsec)
        )
    }

    /// Whether the write-ahead log (`<path>-wal`) exists: some connection has the database open for
    /// writing, or one that had was killed.
    var hasWriteAheadLog: Bool {
        var info = stat()
        return lstat(path + "-wal", &info) == 0
    }

    /// Creates the file empty with mode 0600 (never through a symbolic link, never replacing a file);
    /// a file another process created first is fine.
    func createPrivate() throws(SQLiteStoreError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            close(descriptor)
            return
        }
        let code = errno
        guard code == EEXIST else { throw failure("create", code) }
    }

    /// Refuses, for writing, a file this process may not write, or a directory it may not create the
    /// `-wal` and `-shm` companions in (a 0400 database, a read-only file system): SQLite would open it
    /// read-only without a word and fail at the first write.
    ///
    /// It asks the file system (`faccessat` with the effective IDs: permissions, a read-only mount) and
    /// never opens the file: closing a descriptor of ours would drop the locks this process's open
    /// connections hold on it.
    func checkWritable() throws(SQLiteStoreError) {
        guard faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0 else { throw failure("open for writing", errno) }
        let parent = FilePathText.parent(of: path)
        var walInfo = stat()
        let hasCompanions = stat(path + "-wal", &walInfo) == 0 && stat(path + "-shm", &walInfo) == 0
        guard !hasCompanions, faccessat(AT_FDCWD, parent.isEmpty ? "." : parent, W_OK, AT_EACCESS) != 0 else { return }
        let code = errno
        throw SQLiteStoreError(code: .readOnly, message: "cannot write in \(parent.isEmpty ? "." : parent), the directory of \(path): \(Self.reason(code))")
    }

    /// Refuses, for writing, a store directory next to the database (`<path><suffix>`, such as the state
    /// store's `.attachments` and `.owners`) that is a symbolic link, not a directory, or owned by another
    /// user; a missing one is fine (it is created when first needed).
    func checkCompanionDirectories(_ suffixes: [String]) throws(SQLiteStoreError) {
        for directory in suffixes.map({ path + $0 }) {
            var info = stat()
            guard lstat(directory, &info) == 0 else { continue }
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw SQLiteStoreError(code: .openFailed, message: "\(directory) is not a directory (a symbolic link or a file is in the way)")
            }
            guard info.st_uid == geteuid() else {
                throw SQLiteStoreError(code: .openFailed, message: "\(directory) is owned by another user")
            }
        }
    }

    /// Removes group and other access from the file and its `-wal` and `-shm` companions when they have
    /// any (a store written by an older version, or created by hand).
    func tightenPermissions() {
        for name in [path, path + "-wal", path + "-shm"] {
            var info = stat()
            guard stat(name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid(), info.st_mode & 0o077 != 0 else { continue }
            _ = chmod(name, info.st_mode & 0o700)
        }
    }

    /// A typed error naming the path: `cannot <action> <path>: <reason>`.
    func failure(_ action: String, _ code: Int32) -> SQLiteStoreError {
        let reason = Self.reason(code)
        let storeCode: SQLiteStoreError.Code = switch code {
        case EACCES, EPERM, EROFS: .readOnly
        case ENOSPC, EDQUOT: .diskFull
        case ENOENT, ENOTDIR: .notFound
        default: .ioFailure
        }
        return SQLiteStoreError(code: storeCode, message: "cannot \(action) \(path): \(reason)")
    }

    /// The system's cause, in the words the store's messages use.
    static func reason(_ code: Int32) -> String {
        switch code {
        case ENOENT: "no such file or directory"
        case ENOTDIR: "a parent is not a directory"
        case EACCES, EPERM: "permission denied"
        case EROFS: "read-only file system"
        case ENOSPC, EDQUOT: "no space left"
        default: String(cString: strerror(code)).lowercased() + " (errno \(code))"
        }
    }
}
