public import CodexKitTesting
public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One of the test servers over Streamable HTTP: `python <script> --http`, which binds a port the
/// system picks and prints it first.
public final class MCPHTTPTestServer: Sendable {
    /// The server process.
    public let process: SpawnedProcess
    /// Its MCP endpoint.
    public let url: URL
    private let output: String

    private init(process: SpawnedProcess, url: URL, output: String) {
        self.process = process
        self.url = url
        self.output = output
    }

    /// Starts `script` (under `Tests/MCPServers`) with `environment` added to this process's.
    public static func start(_ script: String, environment: [String: String] = [:]) async throws -> MCPHTTPTestServer {
        let python = try await MCPTestPython.interpreter()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-mcp-http-\(UUID().uuidString.prefix(8))").path
        let process = try SpawnedProcess(
            python, [MCPTestPython.script(script), "--http"], environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            stdout: .file(output), stderr: .file(output + ".err")
        )
        // Wait for the port line (the socket already listens when it is printed); a hang guard, not a race.
        for _ in 0..<6_000 {
            if let text = try? String(contentsOfFile: output, encoding: .utf8), let line = text.split(separator: "\n").first, text.contains("\n"), let port = Int(line) {
                return MCPHTTPTestServer(process: process, url: URL(string: "http://127.0.0.1:\(port)/mcp") ?? URL(fileURLWithPath: "/"), output: output)
            }
            if process.reapedTermination != nil { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.send(signal: SIGKILL)
        _ = await process.exit()
        let errors = (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? ""
        throw MCPTestPython.Failure(description: "the HTTP test server did not start: \(errors.suffix(1_000))")
    }

    /// What the server wrote to standard error so far.
    public var standardError: String { (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? "" }

    /// Stops the server and removes its output files.
    public func stop() async {
        process.send(signal: SIGTERM)
        _ = await process.exit()
        try? FileManager.default.removeItem(atPath: output)
        try? FileManager.default.removeItem(atPath: output + ".err")
    }
}

