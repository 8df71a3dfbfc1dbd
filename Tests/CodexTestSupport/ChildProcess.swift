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
        let launch = try Launch(executable, arguments, stdin: stdin, in: directory, environment: environment)
        defer { launch.removeScratch() }
        await started(launch.child.pid)
        return try launch.outcome(await launch.child.exit())
    }

    /// The same as ``run(_:_:stdin:in:environment:started:)``, blocking the calling thread until the
    /// child ends: for a run of many short children on a thread of their own (see ``onOwnThread(_:)``),
    /// never on Swift's cooperative pool.
    public static func runBlocking(
        _ executable: URL, _ arguments: [String], stdin: String? = nil, in directory: URL? = nil, environment: [String: String] = [:]
    ) throws -> Outcome {
        let launch = try Launch(executable, arguments, stdin: stdin, in: directory, environment: environment)
        defer { launch.removeScratch() }
        return try launch.outcome(launch.child.waitForExit())
    }

    /// Runs `body` on a new thread and returns what it returns.
    ///
    /// Each `await` of a child's end waits its turn on Swift's cooperative pool (two threads on CI) behind
    /// the whole parallel suite, and while the suite starts that turn has come tens of seconds after the
    /// child ended. A test that runs a hundred short children one after another does so here, with
    /// ``runBlocking(_:_:stdin:in:environment:)``, and awaits once.
    /// The thread has an 8 MiB stack (deeply recursive test bodies run this way too, through
    /// `runOffCooperativePool`).
    public static func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// A started child and the scratch files its output goes to.
    private struct Launch {
        let child: SpawnedProcess
        let scratch: URL

        init(_ executable: URL, _ arguments: [String], stdin: String?, in directory: URL?, environment: [String: String]) throws {
            scratch = FileManager.default.temporaryDirectory.appendingPathComponent("child-out-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            do {
                let input: String?
                if let stdin {
                    let file = scratch.appendingPathComponent("in")
                    try Data(stdin.utf8).write(to: file)
                    input = file.path
                } else {
                    input = nil
                }
                child = try SpawnedProcess(
                    executable.path, arguments,
                    environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
                    directory: directory?.path, stdin: input.map { .file($0) } ?? .null,
                    stdout: .file(scratch.appendingPathComponent("out").path), stderr: .file(scratch.appendingPathComponent("err").path)
                )
            } catch {
                try? FileManager.default.removeItem(at: scratch)
                throw error
            }
        }

        func outcome(_ ended: SpawnedProcess.Termination) throws -> Outcome {
            Outcome(
                status: ended.status, killed: ended.killed,
                stdout: String(decoding: try Data(contentsOf: scratch.appendingPathComponent("out")), as: UTF8.self),
                stderr: String(decoding: try Data(contentsOf: scratch.appendingPathComponent("err")), as: UTF8.self)
            )
        }

        func removeScratch() {
            try? FileManager.default.removeItem(at: scratch)
        }
    }
}
