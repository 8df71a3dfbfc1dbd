import CodexCore
import Dispatch
import Foundation
import Glibc
import Synchronization

/// A stdio MCP server: a child process started with `posix_spawn` in a process group of its own, its
/// standard input a socket (written with `MSG_NOSIGNAL`, so a server that died is an `EPIPE` error and
/// never a `SIGPIPE`), its standard output read line by line on a thread of its own within the message
/// limit, and its standard error read on another thread and handed to the log.
///
/// The child gets exactly descriptors 0, 1 and 2 (every other one is closed), an empty signal mask and
/// default signal actions. ``terminate(grace:)`` ends it the way the MCP specification says: close its
/// input, wait, `SIGTERM` to the group, wait, `SIGKILL` to the group.
final class MCPStdioProcess: Sendable {
    /// What the process reports, on its reader threads.
    struct Callbacks: Sendable {
        /// One line of standard output (one message), without its newline.
        let line: @Sendable ([UInt8]) -> Void
        /// Standard output ended: the process exited or closed it, or broke the message limit (the error
        /// says which). Called once, after the last `line`.
        let ended: @Sendable (MCPError) -> Void
        /// One line of standard error, cut at 4 KiB.
        let stderr: @Sendable (String) -> Void
    }

    /// The child's process ID (also its process group's).
    let pid: pid_t
    private let input: Int32
    /// The descriptors this side holds (input socket, output and error pipes), for the tests that check
    /// none is left open.
    let descriptors: [Int32]
    private let writer = DispatchQueue(label: "codexkit.mcp.stdio.writer")
    private let exited = DispatchSemaphore(value: 0)
    private let state = Mutex<State>(State())

    private struct State {
        var inputOpen = true
        var termination: Int32?
        var reaped = false
        var terminating = false
    }

    /// The longest standard-error line kept; the rest of the line is dropped.
    static let maximumStderrLine = 4_096
    /// How long one write may block on a server that does not read its input.
    static let writeTimeoutSeconds = 30

    /// Starts `command` with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: The child's complete environment.
    ///   - directory: Its working directory; nil keeps this process's.
    ///   - maximumMessageBytes: The longest line accepted on standard output.
    /// - Throws: ``MCPError`` `mcp_spawn_failed`.
    init(
        command: String, arguments: [String], environment: [String: String], directory: String?, maximumMessageBytes: Int, callbacks: Callbacks
    ) throws(MCPError) {
        var pair: [Int32] = [-1, -1]
        var output: [Int32] = [-1, -1]
        var errors: [Int32] = [-1, -1]
        func closeAll() { for fd in pair + output + errors where fd >= 0 { close(fd) } }
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0,
              Self.cloexecPipe(&output), Self.cloexecPipe(&errors)
        else {
            let code = errno
            closeAll()
            throw Self.spawnError("creating the standard streams", code)
        }
        var timeout = timeval(tv_sec: Self.writeTimeoutSeconds, tv_usec: 0)
        setsockopt(pair[0], SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // The child reads requests from its end; nothing is ever written to us through the socket.
        shutdown(pair[1], Int32(SHUT_WR))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        var steps: [(Int32, String)] = [
            (posix_spawn_file_actions_adddup2(&actions, pair[1], 0), "redirecting standard input"),
            (posix_spawn_file_actions_adddup2(&actions, output[1], 1), "redirecting standard output"),
            (posix_spawn_file_actions_adddup2(&actions, errors[1], 2), "redirecting standard error"),
            // Before glibc 2.34 there is no close-from action; every descriptor this client creates is
            // close-on-exec anyway, so the step is skipped there.
            (Self.orSkipped(MCPSpawnActions.closeFrom(&actions, 3)), "closing inherited descriptors"),
            (posix_spawnattr_setsigmask(&attributes, &noSignals), "clearing the signal mask"),
            (posix_spawnattr_setsigdefault(&attributes, &defaults), "resetting signal actions"),
            (posix_spawnattr_setpgroup(&attributes, 0), "creating a process group"),
            (posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP)), "setting spawn flags"),
        ]
        if let directory { steps.append((MCPSpawnActions.changeDirectory(&actions, directory), "changing directory")) }
        if let failed = steps.first(where: { $0.0 != 0 }) {
            closeAll()
            throw Self.spawnError(failed.1, failed.0)
        }
        let argv = ([command] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var child: pid_t = 0
        let searchPath = environment["PATH"]
        let result: Int32 = argv.withUnsafeBufferPointer { arguments in
            envp.withUnsafeBufferPointer { variables in
                guard let arguments = arguments.baseAddress, let variables = variables.baseAddress else { return EINVAL }
                return command.contains("/")
                    ? posix_spawn(&child, command, &actions, &attributes, arguments, variables)
                    : Self.spawnSearchingPath(&child, command, searchPath, &actions, &attributes, arguments, variables)
            }
        }
        close(pair[1])
        close(output[1])
        close(errors[1])
        guard result == 0 else {
            close(pair[0])
            close(output[0])
            close(errors[0])
            throw Self.spawnError("starting \(Self.displayName(command))", result)
        }
        pid = child
        input = pair[0]
        let outputDescriptor = output[0]
        let errorDescriptor = errors[0]
        descriptors = [pair[0], outputDescriptor, errorDescriptor]
        Thread { [self] in readOutput(outputDescriptor, maximumMessageBytes: maximumMessageBytes, callbacks: callbacks) }.start()
        Thread { Self.readErrors(errorDescriptor, callbacks: callbacks) }.start()
        Thread { [self] in reap() }.start()
    }

    deinit {
        let open = state.withLock { state -> Bool in
            defer { state.inputOpen = false }
            return state.inputOpen
        }
        if open { close(input) }
    }

    /// Writes one message and its newline.
    ///
    /// - Throws: ``MCPError`` `mcp_server_exited` when the server's input is closed, or
    ///   `mcp_transport_failed` (a write error, or a server that stopped reading for 30 s).
    func send(_ message: [UInt8]) async throws(MCPError) {
        try await writer.perform { [self] () throws(MCPError) in try write(message + [UInt8(ascii: "\n")]).get() }
    }

    /// Ends the process: closes its input, waits up to `grace` for it to exit, then sends `SIGTERM` to
    /// its group, waits up to `grace` again, then `SIGKILL`, and reaps it. Returns its wait status.
    @discardableResult
    func terminate(grace: Duration = .seconds(2)) async -> Int32 {
        await withCheckedContinuation { continuation in
            Thread { [self] in continuation.resume(returning: terminateBlocking(grace: grace)) }.start()
        }
    }

    /// Whether the process has exited (and was reaped).
    var hasExited: Bool { state.withLock { $0.reaped } }

    // MARK: - Threads

    private func write(_ bytes: [UInt8]) -> Result<Void, MCPError> {
        let open = state.withLock { $0.inputOpen }
        guard open else { return .failure(MCPError(code: .serverExited, message: "the server's input is closed")) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Glibc.send(input, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EPIPE || code == ECONNRESET { return .failure(MCPError(code: .serverExited, message: "the server closed its input")) }
                if code == EAGAIN || code == EWOULDBLOCK {
                    return .failure(MCPError(code: .transportFailed, message: "the server did not read its input for \(Self.writeTimeoutSeconds) s"))
                }
                return .failure(MCPError(code: .transportFailed, message: "writing to the server failed: \(String(cString: strerror(code)))"))
            }
            offset += written
        }
        return .success(())
    }

    private func readOutput(_ fd: Int32, maximumMessageBytes: Int, callbacks: Callbacks) {
        defer { close(fd) }
        var framer = MCPLineFramer(maximumLineBytes: maximumMessageBytes)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                callbacks.ended(MCPError(code: .transportFailed, message: "reading the server's output failed: \(String(cString: strerror(errno)))"))
                return
            }
            if count == 0 {
                if let last = framer.finish() { callbacks.line(last) }
                callbacks.ended(MCPError(code: .serverExited, message: "the server closed its output"))
                return
            }
            let lines: [[UInt8]]
            do {
                lines = try framer.append(buffer[0..<count])
            } catch {
                callbacks.ended(error)
                return
            }
            for line in lines { callbacks.line(line) }
        }
    }

    private static func readErrors(_ fd: Int32, callbacks: Callbacks) {
        defer { close(fd) }
        var line: [UInt8] = []
        var dropping = false
        var buffer = [UInt8](repeating: 0, count: 8_192)
        func flush() {
            if !line.isEmpty { callbacks.stderr(String(decoding: line, as: UTF8.self)) }
            line.removeAll(keepingCapacity: true)
        }
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 {
                flush()
                return
            }
            for byte in buffer[0..<count] {
                if byte == UInt8(ascii: "\n") {
                    flush()
                    dropping = false
                } else if !dropping {
                    line.append(byte)
                    if line.count >= maximumStderrLine {
                        flush()
                        dropping = true
                    }
                }
            }
        }
    }

    /// Waits for the child, then (within moments, so the group ID cannot have been reused) ends what
    /// it left in its process group: a grandchild that kept its output open would otherwise keep the
    /// connection from ending.
    private func reap() {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR {
                status = -1
                break
            }
        }
        kill(-pid, SIGKILL)
        state.withLock {
            $0.termination = status
            $0.reaped = true
        }
        exited.signal()
    }

    private func terminateBlocking(grace: Duration) -> Int32 {
        let first = state.withLock { state -> Bool in
            defer { state.terminating = true }
            return !state.terminating
        }
        if first {
            let open = state.withLock { state -> Bool in
                defer { state.inputOpen = false }
                return state.inputOpen
            }
            // The writer queue may be inside `send` on this descriptor; closing happens on it, in turn.
            if open {
                shutdown(input, Int32(SHUT_RDWR))
                writer.sync { _ = close(input) }
            }
        }
        let deadline = { DispatchTime.now() + .milliseconds(Int(grace.components.seconds * 1_000 + grace.components.attoseconds / 1_000_000_000_000_000)) }
        // Signals go to the group only while the child is unreaped (its group ID is then still its own);
        // the reaper ends the rest of the group when the child exits.
        if exited.wait(timeout: deadline()) == .timedOut {
            signalGroup(SIGTERM)
            if exited.wait(timeout: deadline()) == .timedOut {
                signalGroup(SIGKILL)
                exited.wait()
            }
        }
        exited.signal()
        return state.withLock { $0.termination ?? -1 }
    }

    // MARK: - Helpers

    private func signalGroup(_ signal: Int32) {
        state.withLock { state in
            if !state.reaped { kill(-pid, signal) }
        }
    }

    private static func orSkipped(_ result: Int32) -> Int32 { result == ENOSYS ? 0 : result }

    /// A pipe whose ends close on `exec` (glibc's `pipe2` is not visible to Swift without `_GNU_SOURCE`).
    private static func cloexecPipe(_ ends: inout [Int32]) -> Bool {
        guard pipe(&ends) == 0 else { return false }
        for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    private static func spawnError(_ step: String, _ code: Int32) -> MCPError {
        MCPError(code: .spawnFailed, message: "\(step) failed: \(String(cString: strerror(code))) (\(code))")
    }

    /// The command's last path component (arguments are never shown: they may hold secrets).
    static func displayName(_ command: String) -> String {
        command.split(separator: "/").last.map(String.init) ?? command
    }

    /// `posix_spawnp` looks the command up in this process's `PATH`; the child's own `PATH` is what a
    /// user means, so look there.
    private static func spawnSearchingPath(
        _ child: inout pid_t, _ command: String, _ path: String?, _ actions: inout posix_spawn_file_actions_t, _ attributes: inout posix_spawnattr_t,
        _ arguments: UnsafePointer<UnsafeMutablePointer<CChar>?>, _ environment: UnsafePointer<UnsafeMutablePointer<CChar>?>
    ) -> Int32 {
        let directories = (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map(String.init)
        var last: Int32 = ENOENT
        for directory in directories where !directory.isEmpty {
            let candidate = directory + "/" + command
            guard access(candidate, X_OK) == 0 else { continue }
            last = posix_spawn(&child, candidate, &actions, &attributes, arguments, environment)
            if last == 0 { return 0 }
        }
        return last
    }
}

/// The glibc extensions to `posix_spawn` file actions, looked up at run time (glibc 2.34+ has them).
private enum MCPSpawnActions {
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
