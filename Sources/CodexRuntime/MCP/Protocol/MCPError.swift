public import CodexCore
import CodexSchema

/// The one public error of the MCP client: a stable code, a log-safe message, the JSON-RPC error code
/// when the server answered with one, and the cause.
///
/// ```swift
/// do {
///     _ = try await client.callTool("search", arguments: ["query": "swift"])
/// } catch let error as MCPError where error.code == .timeout {
///     // the server did not answer within the request timeout; it was told the call is cancelled
/// }
/// ```
///
/// ``description`` names the server and the failure, never arguments, tool output or a secret.
public struct MCPError: Error, Sendable, CustomStringConvertible {
    /// A stable snake_case error code. Unknown codes keep their raw value.
    public struct Code: OpenVocabulary, ExpressibleByStringLiteral {
        /// The code text.
        public let rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Creates a code from a literal.
        public init(stringLiteral value: String) { rawValue = value }

        /// The server configuration is unusable (an empty name or command, a bad limit).
        public static let invalidConfiguration: Code = "mcp_invalid_configuration"
        /// The server process could not be started.
        public static let spawnFailed: Code = "mcp_spawn_failed"
        /// The server process ended, or closed its output, while the client needed it.
        public static let serverExited: Code = "mcp_server_exited"
        /// A message from the server was larger than the configured limit; the server was stopped.
        public static let messageTooLarge: Code = "mcp_message_too_large"
        /// The server wrote something that is not a JSON-RPC 2.0 message; the server was stopped.
        public static let malformedMessage: Code = "mcp_malformed_message"
        /// A reply had the wrong shape for its request (a missing field, an unknown `resultType`).
        public static let protocolViolation: Code = "mcp_protocol_violation"
        /// The server answered with a JSON-RPC error (see ``MCPError/rpcCode``).
        public static let remoteError: Code = "mcp_remote_error"
        /// The server did not answer within the request timeout; it was told the request is cancelled.
        public static let timeout: Code = "mcp_timeout"
        /// The client and the server share no protocol revision.
        public static let unsupportedProtocolVersion: Code = "mcp_unsupported_protocol_version"
        /// The client was shut down.
        public static let closed: Code = "mcp_closed"
        /// Reading from or writing to the server failed.
        public static let transportFailed: Code = "mcp_transport_failed"
        /// The server ended the HTTP session (a 404 on it); the next request starts a new one.
        public static let sessionExpired: Code = "mcp_session_expired"
        /// The server refused the credentials (HTTP 401 or 403).
        public static let unauthorized: Code = "mcp_unauthorized"
        /// The server has no tool of that name.
        public static let toolNotFound: Code = "mcp_tool_not_found"
    }

    /// The stable code.
    public var code: Code
    /// A short, log-safe explanation.
    public var message: String
    /// The server's name in the client configuration.
    public var server: String?
    /// The JSON-RPC error code, for ``Code/remoteError`` (and version or capability refusals).
    public var rpcCode: Int?
    /// The server's own error message, for ``Code/remoteError``. It is not part of ``description``: a
    /// server may echo a call's arguments in it.
    public var remoteMessage: String?
    /// What caused this error, when something else did.
    public var underlying: (any Error)?
    /// The JSON-RPC error's `data`, for ``Code/remoteError`` (an unsupported-version error lists the
    /// versions the server supports there).
    var remoteData: JSONValue?

    /// Creates an error.
    public init(code: Code, message: String, server: String? = nil, rpcCode: Int? = nil, remoteMessage: String? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.server = server
        self.rpcCode = rpcCode
        self.remoteMessage = remoteMessage
        self.underlying = underlying
    }

    /// `code: message (server S, JSON-RPC error N)`.
    public var description: String {
        var text = "\(code.rawValue): \(message)"
        var details: [String] = []
        if let server { details.append("server \(server)") }
        if let rpcCode { details.append("JSON-RPC error \(rpcCode)") }
        if !details.isEmpty { text += " (" + details.joined(separator: ", ") + ")" }
        return text
    }

    /// This error, naming `server`.
    func naming(_ server: String) -> MCPError {
        var copy = self
        if copy.server == nil { copy.server = server }
        return copy
    }
}
