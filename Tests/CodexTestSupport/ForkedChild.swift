import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process forked without exec, so it holds a copy of every descriptor the test process had at
/// the fork (and shares their open file descriptions, with any `flock` on them) until ``finish()`` or
/// its last reference lets it exit, or the test process ends. It must never outlive its test, or it
/// would hold the test runner's output pipe open. The child only calls `close`, `read` and `_exit`, which
/// are safe in the child of a multithreaded process.
///
/// This is what a host's `posix_spawn` or `Process` on another thread looks like between its fork and
/// its exec, made to last.
public final class ForkedChild {
    private let pid: pid_t
    private let proceed: Int32
    private var status: Int32?

    /// Forks the child.
    /// - Throws: `POSIXError` when the pipe or the fork fails.
    public init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        // Children other tests spawn must not inherit the pipe (Glibc's module omits `pipe2`).
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let child = fork()
        if child == 0 {
            // Without its own copy of the write end, the child sees end of file if the test process
            // dies before `finish()`, and exits instead of holding the runner's output open.
            close(ends[1])
            var byte: UInt8 = 0
            _ = read(ends[0], &byte, 1)
            _exit(0)
        }
        let code = errno
        close(ends[0])
        guard child > 0 else {
            close(ends[1])
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        pid = child
        proceed = ends[1]
    }

    /// Lets the child exit and reaps it; returns its wait status (0 for a clean exit). Later calls
    /// return the same status.
    @discardableResult public func finish() -> Int32 {
        if let status { return status }
        var byte: UInt8 = 1
        _ = write(proceed, &byte, 1)
        close(proceed)
        var reaped: Int32 = -1
        while waitpid(pid, &reaped, 0) < 0, errno == EINTR {}
        status = reaped
        return reaped
    }

    deinit { finish() }

    /// Whether an exclusive `flock` on a fresh read-only descriptor for `path` succeeds at once (the lock
    /// is dropped again): the test's view of "nobody holds this lock file".
    /// - Throws: `POSIXError` when the file cannot be opened.
    public static func lockIsFree(_ path: String) throws -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return false }
        flock(descriptor, LOCK_UN)
        return true
    }
}
