public import CodexTransport
public import Foundation

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
        /// A Streamable HTTP endpoint (one URL that takes POSTs; `http` or `https`).
        ///
        /// - Parameters:
        ///   - url: The MCP endpoint.
        ///   - headers: Extra headers on every request.
        ///   - bearerToken: Sent as `Authorization: Bearer …` through the authentication middleware
        ///     (for credentials that renew, put an ``CodexTransport/AuthenticationMiddleware`` with a
        ///     provider in ``MCPServerConfiguration/middlewares`` instead).
        case streamableHTTP(url: URL, headers: [String: String] = [:], bearerToken: String? = nil)
    }

    /// The HTTP client HTTP servers are reached through when ``httpClient`` is nil: one for the process,
    /// made on first use.
    static var sharedHTTPClient: any HTTPClient { SharedHTTPClient.client }

    private enum SharedHTTPClient {
        static let client: any HTTPClient = DefaultHTTPClient()
    }

    /// The variables a stdio server inherits from this process unless configured otherwise: enough to
    /// run a program, nothing that carries credentials (an API key in this process's environment does
    /// not reach a third-party server unless the host passes it on).
    public static let defaultInheritedEnvironment = ["HOME", "LANG", "LC_ALL", "LC_CTYPE", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "TZ", "USER"]

    /// Which protocol revisions the client tries.
    public enum Revisions: Sendable, Hashable {
        /// The stateless revision first (`server/discover`), the handshake when the server refuses it.
        case automatic
        /// Only the `initialize` handshake (2025-11-25, 2025-06-18 or 2025-03-26).
        case handshakeOnly
        /// Only the stateless revision.
        case statelessOnly
    }

    /// The server's name: letters, digits, `_` and `-`; it prefixes its tools' names.
    public var name: String
    /// How to reach it.
    public var transport: Transport
    /// How long one request may wait for its reply before it is cancelled. Default 60 s.
    public var requestTimeout: Duration
    /// How long connecting may take (each of the protocol probe and the handshake). Default 30 s: a
    /// server written in an interpreted language can take several seconds to start on a busy machine,
    /// and one that never answers the probe costs this long once before the handshake.
    public var connectTimeout: Duration
    /// The largest message accepted from the server, in bytes. Default 16 MiB; 1 KiB…256 MiB.
    public var maximumMessageBytes: Int
    /// The variables a stdio server inherits from this process.
    public var inheritedEnvironment: [String]
    /// Secrets to redact from the server's standard error before it reaches the log (values of
    /// ``Transport/stdio(command:arguments:environment:workingDirectory:)``'s environment are added).
    public var secrets: [String]
    /// Which protocol revisions the client tries. Default ``Revisions/automatic``.
    public var revisions: Revisions
    /// The HTTP client for a Streamable HTTP server; nil uses one shared ``CodexTransport/DefaultHTTPClient``.
    public var httpClient: (any HTTPClient)?
    /// Steps in front of the HTTP client (authentication, logging), the first seeing each request first.
    public var middlewares: [any HTTPMiddleware]

    /// Creates a configuration.
    public init(
        name: String, transport: Transport, requestTimeout: Duration = .seconds(60), connectTimeout: Duration = .seconds(30),
        maximumMessageBytes: Int = 16 << 20, inheritedEnvironment: [String] = MCPServerConfiguration.defaultInheritedEnvironment, secrets: [String] = [],
        revisions: Revisions = .automatic, httpClient: (any HTTPClient)? = nil, middlewares: [any HTTPMiddleware] = []
    ) {
        self.revisions = revisions
        self.httpClient = httpClient
        self.middlewares = middlewares
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
        case .streamableHTTP(let url, let headers, _):
            guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host?.isEmpty == false else {
                throw MCPError(code: .invalidConfiguration, message: "the server URL must be http or https with a host", server: name)
            }
            for (header, value) in headers where header.isEmpty || header.contains(":") || value.contains("\r") || value.contains("\n") {
                throw MCPError(code: .invalidConfiguration, message: "a header name or value is malformed", server: name)
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
