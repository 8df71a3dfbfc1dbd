import CodexTestSupport
import Foundation

/// Runs the built `codexctl` (or any executable) as a child process and captures its output.
struct CommandResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

enum CommandRunner {
    /// The directory holding the test bundle, which is also where SwiftPM puts `codexctl`.
    static let productsDirectory: URL = {
        let executable = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        var directory = executable.deletingLastPathComponent()
        while directory.path != "/" && !FileManager.default.fileExists(atPath: directory.appendingPathComponent("codexctl").path) {
            directory = directory.deletingLastPathComponent()
        }
        return directory
    }()

    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func codexctl(_ arguments: [String], stdin: String? = nil, in directory: URL? = nil, environment: [String: String] = [:]) async throws -> CommandResult {
        try await run(productsDirectory.appendingPathComponent("codexctl"), arguments, stdin: stdin, in: directory, environment: environment)
    }

    /// Runs `codexctl` through `/bin/sh` with `redirection` applied to it (for example `> /dev/full`,
    /// `>&-`), so a test can hand it a standard output that fails.
    static func codexctl(_ arguments: [String], redirecting redirection: String, stdin: String? = nil, environment: [String: String] = [:]) async throws -> CommandResult {
        let (shell, words) = codexctlThroughShell(arguments, redirecting: redirection)
        return try await run(shell, words, stdin: stdin, environment: environment)
    }

    /// ``codexctl(_:stdin:in:environment:)``, or with `redirection` ``codexctl(_:redirecting:stdin:environment:)``,
    /// blocking the calling thread: for many short runs in one `ChildProcess.onOwnThread` block.
    static func codexctlBlocking(_ arguments: [String], redirecting redirection: String? = nil) throws -> CommandResult {
        let (executable, words) = redirection.map { codexctlThroughShell(arguments, redirecting: $0) }
            ?? (productsDirectory.appendingPathComponent("codexctl"), arguments)
        let outcome = try ChildProcess.runBlocking(executable, words, in: repositoryRoot)
        return CommandResult(status: outcome.status, stdout: outcome.stdout, stderr: outcome.stderr)
    }

    /// `/bin/sh` and its arguments to run `codexctl arguments` with `redirection` applied.
    private static func codexctlThroughShell(_ arguments: [String], redirecting redirection: String) -> (URL, [String]) {
        (URL(fileURLWithPath: "/bin/sh"), ["-c", #"exec "$0" "$@" "# + redirection, productsDirectory.appendingPathComponent("codexctl").path] + arguments)
    }

    /// Runs `executable` and waits for it without holding a thread of Swift's cooperative pool (two
    /// threads on CI), so a slow child cannot starve the suite's network tests.
    static func run(
        _ executable: URL, _ arguments: [String], stdin: String? = nil, in directory: URL? = nil, environment: [String: String] = [:]
    ) async throws -> CommandResult {
        let outcome = try await ChildProcess.run(executable, arguments, stdin: stdin, in: directory ?? repositoryRoot, environment: environment)
        return CommandResult(status: outcome.status, stdout: outcome.stdout, stderr: outcome.stderr)
    }

    /// Writes `contents` to a new temporary file and returns its path. The files of one test process
    /// share one directory, removed when the process exits.
    static func temporaryFile(_ contents: String, name: String = "file.json") throws -> String {
        _ = removeInputsAtExit
        let directory = URL(fileURLWithPath: inputsDirectory).appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(contents.utf8).write(to: url)
        return url.path
    }
}

/// The directory of this test process's temporary input files.
private let inputsDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-inputs-\(UUID().uuidString)").path

/// Registers, once, the removal of ``inputsDirectory`` when the process exits.
private let removeInputsAtExit: Void = {
    atexit { try? FileManager.default.removeItem(atPath: inputsDirectory) }
}()
