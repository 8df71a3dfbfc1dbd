import CodexLoopback
import Foundation

/// Runs this executable again as a child process (a benchmark's measuring half, so its resident memory
/// is its own) and returns what it printed.
enum BenchChildProcess {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `codexctl <arguments>` and waits for it (blocking, in `waitpid`: the parent stays idle while
    /// the child measures).
    /// - Returns: Its standard output.
    /// - Throws: `Failure` when it cannot start or does not exit with status 0.
    static func run(_ arguments: [String]) throws -> String {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let output = scratch.appendingPathComponent("out")
        let errors = scratch.appendingPathComponent("err")
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        // The child's temporary files go under the scratch directory, which goes even when the child dies.
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = scratch.path
        let ended = try SpawnedProcess(
            executable, arguments, environment: environment, stdout: .file(output.path), stderr: .file(errors.path)
        ).waitForExit()
        // What the child said on standard error is passed on, and its last line names a failure's reason.
        let said = (try? Data(contentsOf: errors)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        if !said.isEmpty { Console.error(said) }
        guard ended.succeeded else {
            let reason = said.split(whereSeparator: \.isNewline).last.map { ": " + String($0.prefix(300)) } ?? ""
            throw Failure(description: "'codexctl \(arguments.prefix(2).joined(separator: " "))' failed (\(ended.killed ? "signal" : "status") \(ended.status))\(reason)")
        }
        return String(decoding: try Data(contentsOf: output), as: UTF8.self)
    }
}
