internal import Foundation
public import Glibc

/// A child process started with `posix_spawn` and reaped with `waitpid`, for tests and benchmarks.
///
/// Foundation's `Process` is avoided on purpose: on Linux it starts a manager thread with a run loop,
/// calls its termination handler on yet another thread, `waitUntilExit()` spins a run loop (two busy
/// cores on a 2-core machine), and its termination state is read across threads without a lock. Here
/// the child gets exactly the descriptors it is given (0, 1 and 2; every other one is closed), an empty
/// signal mask and default `SIGPIPE`, as a shell would start it; a test process's blocked signals and
/// open sockets never leak into it.
public final class SpawnedProcess: Sendable {
    /// How a child ended.
    public struct Termination: Sendable, Equatable {
        /// The exit status, or the signal number when `killed`; -1 when `waitpid` failed.
        public let status: Int32
        /// Whether a signal ended the child.
        public let killed: Bool
        /// Whether the child exited with status 0.
        public var succeeded: Bool { status == 0 && !killed }
    }

    /// Why a child could not be started.
    public struct SpawnError: Error, CustomStringConvertible {
        /// The `errno` value `posix_spawn` (or a setup step) returned.
        public let code: Int32
        /// The step that failed.
        public let step: String
        /// A readable summary.
        public var description: String { "\(step) failed: \(String(cString: strerror(code))) (\(code))" }
    }

    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A file: read for standard input; for output, created (mode 0600) or truncated.
        case file(String)
        /// This process's own descriptor.
        case inherited
    }

    /// The child's process ID.
    public let pid: pid_t
    private let reaped = LockedState<Termination?>(nil)
    /// Held while one caller waits in `waitpid`, so a second caller waits for its answer instead of
    /// reaping twice.
    private let waiting = NSLock()

    /// Starts `executable` (a path, or a bare name looked up in `PATH`) with `arguments`.
    /// - Parameters:
    ///   - environment: The complete environment; nil inherits this process's.
    ///   - directory: The working directory; nil inherits this process's.
    ///   - stdin: Where standard input comes from.
    ///   - stdout: Where standard output goes.
    ///   - stderr: Where standard error goes.
    /// - Throws: `SpawnError` when the child cannot be started.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null
    ) throws {
        var actions = posix_spawn_file_actions_t()
        try Self.check(posix_spawn_file_actions_init(&actions), "posix_spawn_file_actions_init")
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (descriptor, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            let flags = descriptor == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC
            switch stream {
            case .inherited: continue
            case .null: try Self.check(posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", flags, 0), "redirecting \(descriptor)")
            case .file(let path): try Self.check(posix_spawn_file_actions_addopen(&actions, descriptor, path, flags, 0o600), "redirecting \(descriptor)")
            }
        }
        try Self.check(GNUSpawnActions.closeFrom(&actions, 3), "closing inherited descriptors")
        if let directory { try Self.check(GNUSpawnActions.changeDirectory(&actions, directory), "changing directory") }

        var attributes = posix_spawnattr_t()
        try Self.check(posix_spawnattr_init(&attributes), "posix_spawnattr_init")
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        try Self.check(posix_spawnattr_setsigmask(&attributes, &noSignals), "clearing the signal mask")
        try Self.check(posix_spawnattr_setsigdefault(&attributes, &defaults), "resetting SIGPIPE")
        try Self.check(posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)), "posix_spawnattr_setflags")

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environmentLines = environment.map { $0.map { "\($0.key)=\($0.value)" } }
        let envp = environmentLines.map { $0.map { strdup($0) } + [nil] }
        defer { envp?.forEach { free($0) } }
        var child: pid_t = 0
        let result: Int32 = argv.withUnsafeBufferPointer { arguments in
            (envp ?? []).withUnsafeBufferPointer { given in
                let environment = envp == nil ? UnsafePointer(environ) : given.baseAddress
                guard let environment, let arguments = arguments.baseAddress else { return EINVAL }
                return executable.contains("/")
                    ? posix_spawn(&child, executable, &actions, &attributes, arguments, environment)
                    : posix_spawnp(&child, executable, &actions, &attributes, arguments, environment)
            }
        }
        try Self.check(result, "posix_spawn")
        pid = child
    }

    /// Sends `signal` to the child unless it has already been reaped (its ID may then belong to another
    /// process).
    public func send(signal: Int32) {
        guard reapedTermination == nil else { return }
        kill(pid, signal)
    }

    /// The termination once the child has been reaped, nil before.
    public var reapedTermination: Termination? {
        reaped.withLock { $0 }
    }

    /// Blocks the calling thread until the child ends, and reaps it. Later calls return the same value.
    public func waitForExit() -> Termination {
        waiting.lock()
        defer { waiting.unlock() }
        if let ended = reapedTermination { return ended }
        var status: Int32 = 0
        var result: pid_t
        repeat {
            result = waitpid(pid, &status, 0)
        } while result == -1 && errno == EINTR
        // WIFSIGNALED / WTERMSIG / WEXITSTATUS, which Swift does not import as macros.
        let signal = status & 0x7f
        let ended: Termination
        if result != pid {
            ended = Termination(status: -1, killed: false)
        } else if signal != 0 && signal != 0x7f {
            ended = Termination(status: signal, killed: true)
        } else {
            ended = Termination(status: (status >> 8) & 0xff, killed: false)
        }
        reaped.withLock { $0 = ended }
        return ended
    }

    /// Waits for the child to end on a thread of its own, never one of Swift's cooperative pool.
    public func exit() async -> Termination {
        if let ended = reapedTermination { return ended }
        return await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: self.waitForExit()) }.start()
        }
    }

    private static func check(_ result: Int32, _ step: String) throws {
        guard result == 0 else { throw SpawnError(code: result, step: step) }
    }
}

/// The GNU `posix_spawn` file actions Swift's Glibc module does not import (they need `_GNU_SOURCE`),
/// looked up at run time. glibc has had both since 2.34.
private enum GNUSpawnActions {
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    static func closeFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: Int32) -> Int32 {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return ENOSYS }
        return unsafeBitCast(symbol, to: CloseFrom.self)(actions, lowest)
    }

    static func changeDirectory(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: String) -> Int32 {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else { return ENOSYS }
        return path.withCString { unsafeBitCast(symbol, to: ChangeDirectory.self)(actions, $0) }
    }
}
