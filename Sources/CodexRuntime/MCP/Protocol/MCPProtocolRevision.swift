/// The MCP protocol revisions this client speaks, and how a server was reached.
public enum MCPProtocolRevision {
    /// The stateless revision: no handshake, every request carries its version and the client's
    /// capabilities in `_meta`, `server/discover` describes the server.
    public static let stateless = "2026-07-28"
    /// The revisions negotiated with the `initialize` handshake, newest first.
    public static let handshake = ["2025-11-25", "2025-06-18", "2025-03-26"]
}

/// How the client talks to one server, settled when it connects.
public enum MCPSessionEra: Sendable, Hashable {
    /// The stateless revision (`server/discover` answered).
    case stateless(version: String)
    /// A handshake revision (`initialize` answered with this version).
    case handshake(version: String)

    /// The negotiated protocol version.
    public var version: String {
        switch self {
        case .stateless(let version), .handshake(let version): return version
        }
    }
}
