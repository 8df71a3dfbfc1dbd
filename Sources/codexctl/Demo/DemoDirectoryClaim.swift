import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `demo --keep DIR`: the directory, created if missing, held by an exclusive `flock` on
/// `DIR/.codexctl-demo.lock` for the whole run, so two demos never write one directory. The lock is
/// taken before the directory is checked for being empty (the lock file aside): a second demo started
/// meanwhile is refused by the lock, one started later by the first demo's files.
final class DemoDirectoryClaim {
    /// The lock file's name inside the directory.
    static let lockName = ".codexctl-demo.lock"
    private let descriptor: Int32

    /// Claims `directory`.
    /// - Throws: ``CLIFailure/Thrown`` `not_a_directory`, `directory_in_use` or `directory_not_empty`, or
    ///   Foundation's error (with the path and the system's cause) when the directory cannot be made.
    init(_ directory: URL) throws {
        var info = stat()
        if lstat(directory.path, &info) == 0 {
            // A symbolic link is refused too: the stores refuse to live behind one, so the run would
            // stop halfway.
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                let what = (info.st_mode & S_IFMT) == S_IFLNK ? "a symbolic link" : "not a directory"
                throw CLIFailure.Thrown(code: "not_a_directory", message: "\(directory.path) is \(what); --keep needs a new or empty directory")
            }
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let lockPath = directory.appendingPathComponent(Self.lockName).path
        var opened: Int32 = -1
        var created = false
        // Made here, or opened as another demo left it; a refused demo that made it removes it, so an
        // open can find it gone just after it existed: then try again.
        for _ in 0..<8 {
            repeat { opened = open(lockPath, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) } while opened < 0 && errno == EINTR
            if opened >= 0 {
                created = true
                break
            }
            guard errno == EEXIST else { break }
            repeat { opened = open(lockPath, O_RDWR | O_NOFOLLOW | O_CLOEXEC) } while opened < 0 && errno == EINTR
            guard opened < 0, errno == ENOENT else { break }
        }
        guard opened >= 0 else {
            throw CLIFailure.Thrown(code: "file_system_error", message: "cannot write \(lockPath): \(String(cString: strerror(errno)))")
        }
        descriptor = opened
        // Until the claim is complete, every refusal unlocks and closes the lock file (unlocking a
        // descriptor that holds no lock does nothing), and removes it when this claim made it: a refused
        // directory is left as it was.
        var claimed = false
        var madeHere = false
        defer {
            if !claimed {
                if created, madeHere { _ = unlink(lockPath) }
                _ = flock(opened, LOCK_UN)
                _ = close(opened)
            }
        }
        var locked: Int32
        repeat { locked = flock(opened, LOCK_EX | LOCK_NB) } while locked != 0 && errno == EINTR
        guard locked == 0 else {
            throw CLIFailure.Thrown(code: "directory_in_use", message: "another demo is using \(directory.path); wait for it to end or choose another directory")
        }
        // Holding the lock: a file this claim created is its own to remove on refusal.
        madeHere = created
        let contents = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        guard contents.allSatisfy({ $0 == Self.lockName }) else {
            throw CLIFailure.Thrown(code: "directory_not_empty", message: "\(directory.path) is not empty; --keep needs a new or empty directory")
        }
        claimed = true
    }

    /// Releases the lock (the file stays, so a later demo sees the directory is taken). Unlocks before
    /// closing, so a child process that shares the descriptor until it execs does not keep the claim.
    func release() {
        _ = flock(descriptor, LOCK_UN)
        _ = close(descriptor)
    }
}
