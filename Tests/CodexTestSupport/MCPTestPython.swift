public import Foundation

/// The Python interpreter the MCP tests run the official SDK's servers with: a virtual environment at
/// `.build/mcp-venv` holding `mcp` 2.3.0 from PyPI. `.ci/run` creates it; when it is missing (a
/// developer's first `swift test`), the first test that asks creates it (`python3 -m venv`, then
/// `pip install mcp==2.3.0`) and every other test waits for that one install.
/// `CODEXKIT_MCP_PYTHON` names another interpreter that has `mcp` installed.
public enum MCPTestPython {
    /// Why no interpreter is available.
    public typealias Failure = TestPythonEnvironment.Failure

    /// The SDK version the tests pin.
    public static let sdkVersion = "2.3.0"

    /// The repository's root directory.
    public static var packageRoot: URL { TestPythonEnvironment.packageRoot }

    /// The path of a test server script under `Tests/MCPServers`.
    public static func script(_ name: String) -> String {
        packageRoot.appendingPathComponent("Tests/MCPServers").appendingPathComponent(name).path
    }

    private static let environment = TestPythonEnvironment(
        package: "mcp", version: sdkVersion, directory: ".build/mcp-venv", marker: ".codexkit-mcp-\(sdkVersion)",
        overrideVariable: "CODEXKIT_MCP_PYTHON", purpose: "the MCP tests"
    )

    /// The interpreter's path, creating the environment on first use.
    public static func interpreter() async throws -> String {
        try await environment.interpreter()
    }
}
