import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The one way CLI output leaves the process: `write(2)` on standard output or standard error, every
/// byte written or the failure recorded, never a trap (Foundation's `FileHandle.write(_:)` traps on any
/// I/O error).
///
/// A failed write to standard output ends the command:
/// - `EPIPE` (the reader went away; `SIGPIPE` is ignored so that it arrives as an error) quietly, with
///   exit status 141, as a shell reports a process that `SIGPIPE` ended;
/// - any other error (`ENOSPC`, `EIO`, `EBADF`) with `Error: output_failed: cannot write output: <strerror>` on
///   standard error and exit status 1.
///
/// By default the command ends at once. A command with work that must be closed properly first (a turn
/// `send` or `chat` is streaming) installs a handler with ``onFailure(_:)``: the handler runs once
/// (from the failing write's thread), later output is dropped, and the command ends as it would after
/// Ctrl-C; `main` then exits with ``exitStatus(after:)``. A failed write to standard error is dropped
/// (there is nowhere left to report it).
enum ConsoleOutput {
    /// Why standard output stopped.
    enum Failure: Equatable, Sendable {
        /// The reader closed the pipe.
        case brokenPipe
        /// Another `write(2)` error.
        case failed(errno: Int32)

        /// The command's exit status for it.
        var status: Int32 {
            switch self {
            case .brokenPipe: return 141
            case .failed: return Console.Status.failure
            }
        }

        /// The line printed on standard error, `nil` for a broken pipe (which ends quietly).
        var message: String? {
            switch self {
            case .brokenPipe: return nil
            case .failed(let code): return "Error: output_failed: cannot write output: \(String(cString: strerror(code)))\n"
            }
        }
    }

    private struct State {
        var failure: Failure?
        var handler: (@Sendable () -> Void)?
    }

    private static let state = Mutex(State())

    /// Prepares the process: ignores `SIGPIPE` (a closed reader becomes `EPIPE`, which ends the command
    /// the documented way, instead of a signal that kills it mid-turn), and puts `/dev/null`, opened
    /// read-only, on any of descriptors 0, 1 and 2 that is closed. A closed standard output then fails
    /// every write with `EBADF` (reported), and no file the command opens later (a database) can take
    /// descriptor 1 or 2 and receive its output.
    static func prepareProcess() {
        signal(SIGPIPE, SIG_IGN)
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            let placeholder = open("/dev/null", O_RDONLY)
            if placeholder >= 0, placeholder != descriptor {
                _ = dup2(placeholder, descriptor)
                _ = close(placeholder)
            }
        }
    }

    /// Writes `bytes` to standard output, or records why it cannot and ends the command (see the type).
    static func standardOutput(_ bytes: some Collection<UInt8>) {
        guard state.withLock({ $0.failure == nil }) else { return }
        guard let failure = writeAll(STDOUT_FILENO, bytes) else { return }
        let (first, handler) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
            guard state.failure == nil else { return (false, nil) }
            state.failure = failure
            return (true, state.handler)
        }
        guard first else { return }
        if let handler {
            handler()
        } else {
            exit(exitStatus(after: Console.Status.success))
        }
    }

    /// Writes `bytes` to standard error; a failure is dropped.
    static func standardError(_ bytes: some Collection<UInt8>) {
        _ = writeAll(STDERR_FILENO, bytes)
    }

    /// Runs `handler` (once) when standard output fails, instead of ending the command at once; `nil`
    /// restores the default. Runs it now when output has already failed.
    static func onFailure(_ handler: (@Sendable () -> Void)?) {
        let failed = state.withLock { state -> Bool in
            state.handler = handler
            return state.failure != nil
        }
        if failed, let handler { handler() }
    }

    /// Whether standard output has failed.
    static var failure: Failure? { state.withLock { $0.failure } }

    /// The status the process exits with after a command returned `status`: the output failure's status
    /// (after printing its line) when standard output failed, else `status`.
    static func exitStatus(after status: Int32) -> Int32 {
        guard let failure else { return status }
        if let message = failure.message { standardError(Array(message.utf8)) }
        return failure.status
    }

    /// Writes every byte to `descriptor`, through partial writes, `EINTR` and a non-blocking descriptor
    /// (which it waits on); the failure, or `nil`.
    static func writeAll(_ descriptor: Int32, _ bytes: some Collection<UInt8>) -> Failure? {
        let result = bytes.withContiguousStorageIfAvailable { writeAll(descriptor, UnsafeRawBufferPointer($0)) }
        return result ?? Array(bytes).withUnsafeBytes { writeAll(descriptor, $0) }
    }

    private static func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) -> Failure? {
        guard let base = buffer.baseAddress else { return nil }
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, base + offset, buffer.count - offset)
            if written >= 0 {
                offset += written
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                var waiting = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&waiting, 1, -1)
            case EPIPE: return .brokenPipe
            case let code: return .failed(errno: code)
            }
        }
        return nil
    }
}
