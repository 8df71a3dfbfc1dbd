public import Foundation
import Synchronization

/// A Python virtual environment under `.build` holding one pinned PyPI package, which tests run
/// reference servers with (the MCP SDK's, the OTLP receiver).
///
/// `.ci/run` creates each one; when it is missing (a developer's first `swift test`), the first test that
/// asks creates it (`python3 -m venv --clear`, then `pip install <package>==<version>`, then a marker file
/// naming the version) and every other test waits for that one install. An environment variable can
/// name another interpreter that already has the package.
public struct TestPythonEnvironment: Sendable {
    /// Why no interpreter is available.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed.
        public let description: String

        /// A failure described by `description`.
        /// - Parameter description: What failed.
        public init(description: String) {
            self.description = description
        }
    }

    /// The PyPI package installed into the environment.
    public let package: String
    /// Its pinned version.
    public let version: String
    /// The environment's directory, relative to the repository root (e.g. `.build/mcp-venv`).
    public let directory: String
    /// The marker file inside `directory` written once the install finished.
    public let marker: String
    /// The environment variable that, when set and non-empty, names the interpreter to use instead.
    public let overrideVariable: String
    /// Who needs the environment, for error messages (e.g. "the MCP tests").
    public let purpose: String

    /// Describes an environment; nothing is created until ``interpreter()``.
    /// - Parameters:
    ///   - package: The PyPI package name.
    ///   - version: Its pinned version.
    ///   - directory: The environment's directory relative to the repository root.
    ///   - marker: The marker file's name inside `directory`.
    ///   - overrideVariable: The environment variable naming an interpreter to use instead.
    ///   - purpose: Who needs the environment, for error messages.
    public init(package: String, version: String, directory: String, marker: String, overrideVariable: String, purpose: String) {
        self.package = package
        self.version = version
        self.directory = directory
        self.marker = marker
        self.overrideVariable = overrideVariable
        self.purpose = purpose
    }

    /// The repository's root directory.
    public static var packageRoot: URL { DocumentationExamples.repositoryRoot }

    /// One install per environment directory for the whole test process.
    private static let installs = Mutex<[String: Task<String, any Error>]>([:])

    /// The interpreter's path, creating the environment on first use (concurrent callers share one install).
    /// - Returns: The path of the environment's `python3`, or of the overriding interpreter.
    /// - Throws: ``Failure`` when `venv` or `pip` fails.
    public func interpreter() async throws -> String {
        let task = Self.installs.withLock { installs -> Task<String, any Error> in
            if let task = installs[directory] { return task }
            let started = Task<String, any Error> { try await locate() }
            installs[directory] = started
            return started
        }
        return try await task.value
    }

    private func locate() async throws -> String {
        if let configured = ProcessInfo.processInfo.environment[overrideVariable], !configured.isEmpty { return configured }
        let environment = Self.packageRoot.appendingPathComponent(directory)
        let python = environment.appendingPathComponent("bin/python3").path
        let markerPath = environment.appendingPathComponent(marker).path
        if FileManager.default.fileExists(atPath: markerPath), FileManager.default.isExecutableFile(atPath: python) { return python }
        try await run("/usr/bin/env", ["python3", "-m", "venv", "--clear", environment.path], step: "python3 -m venv")
        let requirement = "\(package)==\(version)"
        try await run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", requirement], step: "pip install \(requirement)")
        guard FileManager.default.createFile(atPath: markerPath, contents: Data()) else { throw Failure(description: "cannot write \(markerPath)") }
        return python
    }

    private func run(_ executable: String, _ arguments: [String], step: String) async throws {
        let name = URL(fileURLWithPath: directory).lastPathComponent
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-\(name)-\(UUID().uuidString.prefix(8)).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let child: SpawnedProcess
        do {
            child = try SpawnedProcess(executable, arguments, stdout: .file(log), stderr: .file(log + ".err"))
        } catch {
            throw Failure(description: "\(step): \(error)")
        }
        let ended = await child.exit()
        defer { try? FileManager.default.removeItem(atPath: log + ".err") }
        guard ended.succeeded else {
            let output = ((try? String(contentsOfFile: log + ".err", encoding: .utf8)) ?? "").suffix(2_000)
            throw Failure(description: "\(step) failed (status \(ended.status)); \(purpose) need Python 3 with venv and PyPI: \(output)")
        }
    }
}
