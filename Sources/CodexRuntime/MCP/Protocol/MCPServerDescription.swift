public import CodexSchema

/// What a server said about itself when the client connected.
public struct MCPServerDescription: Sendable, Hashable {
    /// The negotiated protocol revision and how it was reached.
    public var era: MCPSessionEra
    /// The server's name (`serverInfo.name`), when it gave one.
    public var name: String?
    /// The server's version (`serverInfo.version`), when it gave one.
    public var version: String?
    /// The server's capabilities object, as sent.
    public var capabilities: JSONValue
    /// Usage instructions the server offers for the model, when it gave some.
    public var instructions: String?

    /// Whether the server announces changes to its tool list.
    public var announcesToolListChanges: Bool { capabilities["tools"]?["listChanged"]?.boolValue == true }

    /// Creates a description.
    public init(era: MCPSessionEra, name: String?, version: String?, capabilities: JSONValue, instructions: String?) {
        self.era = era
        self.name = name
        self.version = version
        self.capabilities = capabilities
        self.instructions = instructions
    }
}
