public import Foundation
import Synchronization

/// The Python interpreter the MCP tests run the official SDK's servers with: a virtual environment at
/// `.build/mcp-venv` holding `mcp` 2.3.0 from PyPI. `.ci/run` creates it; when it is missing (a
/// developer's first `swift test`), the first test that asks creates it (`python3 -m venv`, then
/// `pip install mcp==2.3.0`) and every other test waits for that one install.
/// `CODEXKIT_MCP_PYTHON` names another interpreter that has `mcp` installed.
public enum MCPTestPython {
    /// Why no interpreter is available.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed.
        public let description: String
    }

    /// The SDK version the tests pin.
    public static let sdkVersion = "2.3.0"

    /// The repository's root directory.
    public static var packageRoot: URL { DocumentationExamples.repositoryRoot }

    /// The path of a test server script under `Tests/MCPServers`.
    public static func script(_ name: String) -> String {
        packageRoot.appendingPathComponent("Tests/MCPServers").appendingPathComponent(name).path
    }

    private static let shared = Mutex<Task<String, any Error>?>(nil)

    /// The interpreter's path, creating the environment on first use.
    public static func interpreter() async throws -> String {
        let task = shared.withLock { task -> Task<String, any Error> in
            if let task { return task }
            let started = Task<String, any Error> { try await locate() }
            task = started
            return started
        }
        return try await task.value
    }

    private static func locate() async throws -> String {
        if let configured = ProcessInfo.processInfo.environment["CODEXKIT_MCP_PYTHON"], !configured.isEmpty { return configured }
        let environment = packageRoot.appendingPathComponent(".build/mcp-venv")
        let python = environment.appendingPathComponent("bin/python3").path
        let marker = environment.appendingPathComponent(".codexkit-mcp-\(sdkVersion)").path
        if FileManager.default.fileExists(atPath: marker), FileManager.default.isExecutableFile(atPath: python) { return python }
        try await run("/usr/bin/env", ["python3", "-m", "venv", "--clear", environment.path], step: "python3 -m venv")
        try await run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "mcp==\(sdkVersion)"], step: "pip install mcp==\(sdkVersion)")
        guard FileManager.default.createFile(atPath: marker, contents: Data()) else { throw Failure(description: "cannot write \(marker)") }
        return python
    }

    private static func run(_ executable: String, _ arguments: [String], step: String) async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-mcp-venv-\(UUID().uuidString.prefix(8)).log").path
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
            throw Failure(description: "\(step) failed (status \(ended.status)); the MCP tests need Python 3 with venv and PyPI: \(output)")
        }
    }
}
