import Foundation

/// How to reach one MCP server, and the limits the client holds it to.
///
/// ```swift
/// let files = MCPServerConfiguration(
///     name: "files", transport: .stdio(command: "python3", arguments: ["files_server.py"])
/// )
/// ```
public struct MCPServerConfiguration: Sendable {
    /// How the client reaches the server.
    public enum Transport: Sendable {
        /// A child process speaking newline-delimited JSON-RPC on its standard input and output.
        ///
        /// - Parameters:
        ///   - command: A path, or a name looked up in the child's `PATH`.
        ///   - arguments: Its arguments (never logged: they may hold secrets).
        ///   - environment: Variables set for the child, over the inherited ones named by
        ///     ``MCPServerConfiguration/inheritedEnvironment``.
        ///   - workingDirectory: Its working directory; nil keeps this process's.
        case stdio(command: String, arguments: [String] = [], environment: [String: String] = [:], workingDirectory: String? = nil)
    }

    /// The variables a stdio server inherits from this process unless configured otherwise: enough to
    /// run a program, nothing that carries credentials (an API key in this process's environment does
    /// not reach a third-party server unless the host passes it on).
    public static let defaultInheritedEnvironment = ["HOME", "LANG", "LC_ALL", "LC_CTYPE", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "TZ", "USER"]

    /// The server's name: letters, digits, `_` and `-`; it prefixes its tools' names.
    public var name: String
    /// How to reach it.
    public var transport: Transport
    /// How long one request may wait for its reply before it is cancelled. Default 60 s.
    public var requestTimeout: Duration
    /// How long connecting may take (the protocol probe and the handshake). Default 10 s.
    public var connectTimeout: Duration
    /// The largest message accepted from the server, in bytes. Default 16 MiB; 1 KiB…256 MiB.
    public var maximumMessageBytes: Int
    /// The variables a stdio server inherits from this process.
    public var inheritedEnvironment: [String]
    /// Secrets to redact from the server's standard error before it reaches the log (values of
    /// ``Transport/stdio(command:arguments:environment:workingDirectory:)``'s environment are added).
    public var secrets: [String]

    /// Creates a configuration.
    public init(
        name: String, transport: Transport, requestTimeout: Duration = .seconds(60), connectTimeout: Duration = .seconds(10),
        maximumMessageBytes: Int = 16 << 20, inheritedEnvironment: [String] = MCPServerConfiguration.defaultInheritedEnvironment, secrets: [String] = []
    ) {
        self.name = name
        self.transport = transport
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
        self.maximumMessageBytes = maximumMessageBytes
        self.inheritedEnvironment = inheritedEnvironment
        self.secrets = secrets
    }

    /// Checks the name, the command and the limits.
    ///
    /// - Throws: ``MCPError`` `mcp_invalid_configuration`.
    public func validate() throws(MCPError) {
        guard !name.isEmpty, name.utf8.count <= 32, name.utf8.allSatisfy(MCPToolNaming.isNameByte) else {
            throw MCPError(code: .invalidConfiguration, message: "a server name is 1 to 32 letters, digits, '_' or '-'")
        }
        guard (1_024...(256 << 20)).contains(maximumMessageBytes) else {
            throw MCPError(code: .invalidConfiguration, message: "maximumMessageBytes must be between 1 KiB and 256 MiB", server: name)
        }
        guard requestTimeout > .zero, connectTimeout > .zero else {
            throw MCPError(code: .invalidConfiguration, message: "timeouts must be positive", server: name)
        }
        switch transport {
        case .stdio(let command, _, _, _):
            guard !command.isEmpty, !command.contains("\0") else {
                throw MCPError(code: .invalidConfiguration, message: "the server command is empty", server: name)
            }
        }
    }

    /// The child's environment: the inherited variables that are set here, then the configured ones.
    func childEnvironment(_ configured: [String: String], from current: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        var environment: [String: String] = [:]
        for key in inheritedEnvironment { if let value = current[key] { environment[key] = value } }
        environment.merge(configured) { _, new in new }
        return environment
    }
}
