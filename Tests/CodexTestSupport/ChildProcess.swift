public import Foundation

/// Runs a built executable (a test fixture next to the test bundle) as a real child process, awaiting
/// its end without holding a thread of Swift's cooperative pool (see `SpawnedProcess`).
public enum ChildProcess {
    /// How a child ended.
    public struct Outcome: Sendable {
        /// The exit status, or the signal number when `killed`.
        public let status: Int32
        /// Whether the child died from a signal.
        public let killed: Bool
        /// Its standard output.
        public let stdout: String
        /// Its standard error.
        public let stderr: String

        /// An outcome as `run` reports it (tests of code that reads outcomes build their own).
        public init(status: Int32, killed: Bool, stdout: String, stderr: String) {
            self.status = status
            self.killed = killed
            self.stdout = stdout
            self.stderr = stderr
        }
    }

    /// The executable `name` in the build products directory of the running test bundle.
    public static func product(_ name: String) -> URL {
        let bundle = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        var directory = bundle.deletingLastPathComponent()
        while directory.path != "/" && !FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path) {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent(name)
    }

    /// Runs `executable` with `arguments`; `started` gets the child's process ID once it runs.
    /// - Parameters:
    ///   - stdin: Text fed to standard input (default: none, `/dev/null`).
    ///   - directory: The working directory (default: inherited).
    ///   - environment: Variables added to (or replacing) the inherited environment.
    public static func run(
        _ executable: URL, _ arguments: [String], stdin: String? = nil, in directory: URL? = nil, environment: [String: String] = [:],
        started: @Sendable (Int32) async -> Void = { _ in }
    ) async throws -> Outcome {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("child-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("out")
        let err = scratch.appendingPathComponent("err")
        let input: String?
        if let stdin {
            let file = scratch.appendingPathComponent("in")
            try Data(stdin.utf8).write(to: file)
            input = file.path
        } else {
            input = nil
        }
        let child = try SpawnedProcess(
            executable.path, arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
            directory: directory?.path, stdin: input.map { .file($0) } ?? .null, stdout: .file(out.path), stderr: .file(err.path)
        )
        await started(child.pid)
        let ended = await child.exit()
        return Outcome(
            status: ended.status, killed: ended.killed,
            stdout: String(decoding: try Data(contentsOf: out), as: UTF8.self), stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self)
        )
    }
}
