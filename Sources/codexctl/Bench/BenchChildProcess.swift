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
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let ended = try SpawnedProcess(executable, arguments, stdout: .file(output.path), stderr: .inherited).waitForExit()
        guard ended.succeeded else {
            throw Failure(description: "'codexctl \(arguments.prefix(2).joined(separator: " "))' failed (\(ended.killed ? "signal" : "status") \(ended.status))")
        }
        return String(decoding: try Data(contentsOf: output), as: UTF8.self)
    }
}
