import CodexTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A command run on a real pseudo-terminal (through util-linux `script`, which puts it on a new pty as
/// its controlling terminal): the test types into it and reads the screen, as a user would.
final class PseudoTerminal: @unchecked Sendable {
    // @unchecked: used from one test task.
    let directory: URL
    private let keyboard: Int32
    private let process: SpawnedProcess
    private var screenURL: URL { directory.appendingPathComponent("screen.txt") }

    /// Starts `arguments` (the first is the executable) on a pseudo-terminal.
    init(_ arguments: [String], environment: [String: String], directory: URL) throws {
        self.directory = directory
        let fifo = directory.appendingPathComponent("keyboard").path
        guard mkfifo(fifo, 0o600) == 0 else { throw POSIXError(.EIO) }
        // Read-write, so opening never waits for the other end and the child's open does not either.
        keyboard = open(fifo, O_RDWR | O_CLOEXEC)
        guard keyboard >= 0 else { throw POSIXError(.EIO) }
        // `exec`: whatever shell `script` starts (dash keeps itself as the parent of a `-c` command) is replaced
        // by the command, so Ctrl-C reaches only the command, as it does in a user's terminal.
        let command = "exec " + arguments.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        process = try SpawnedProcess(
            "/usr/bin/script", ["-qfec", command, "/dev/null"],
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }.merging(["TERM": "dumb", "SHELL": "/bin/sh"]) { $1 },
            stdin: .file(fifo), stdout: .file(directory.appendingPathComponent("screen.txt").path), stderr: .file(directory.appendingPathComponent("script-errors.txt").path)
        )
    }

    deinit {
        process.send(signal: SIGKILL)
        close(keyboard)
    }

    /// Everything shown so far.
    var screen: String { (try? String(contentsOf: screenURL, encoding: .utf8)) ?? "" }

    /// What `script` itself printed on its standard error.
    var errors: String { (try? String(contentsOf: directory.appendingPathComponent("script-errors.txt"), encoding: .utf8)) ?? "" }

    /// Types `text` (`\u{03}` is Ctrl-C, `\u{04}` is Ctrl-D).
    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(keyboard, $0.baseAddress, $0.count) }
    }

    /// Waits until the screen shows `text` `count` times (bounded); false when it never does.
    @discardableResult
    func waitFor(_ text: String, count: Int = 1, timeout: Duration = .hangGuard) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if screen.components(separatedBy: text).count - 1 >= count { return true }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return false
    }

    /// Waits for the command to end; its exit status.
    func exit() async -> SpawnedProcess.Termination {
        await process.exit()
    }
}
