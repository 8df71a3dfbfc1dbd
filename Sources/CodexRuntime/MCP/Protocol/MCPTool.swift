public import CodexSchema

/// A tool a server offers (one entry of `tools/list`).
public struct MCPTool: Sendable, Hashable {
    /// The tool's name on the server.
    public var name: String
    /// A display title (`title`, else `annotations.title`), when the server gave one.
    public var title: String?
    /// What the tool does, for the model.
    public var description: String?
    /// The JSON Schema of the arguments object.
    public var inputSchema: JSONValue
    /// The JSON Schema of `structuredContent`, when the tool declares one.
    public var outputSchema: JSONValue?
    /// The server's hints about the tool's behaviour (untrusted unless the host trusts the server).
    public var annotations: MCPToolAnnotations
    /// Arguments a stateless HTTP call mirrors into `Mcp-Param-*` headers.
    var parameterHeaders: [MCPParameterHeader] = []

    /// Creates a tool description.
    public init(name: String, title: String? = nil, description: String? = nil, inputSchema: JSONValue, outputSchema: JSONValue? = nil, annotations: MCPToolAnnotations = MCPToolAnnotations()) {
        self.name = name
        self.title = title
        self.description = description
        self.inputSchema = inputSchema
        self.outputSchema = outputSchema
        self.annotations = annotations
    }

    /// The JSON pointers of the input schema's keywords CodexSchema cannot enforce (arguments are checked
    /// against the rest; extension keywords such as `x-mcp-header` are not listed).
    public var unenforcedSchemaKeywords: [String] { MCPSchemaSubset.enforceable(inputSchema).dropped }

    /// Reads one entry of a `tools/list` result.
    init(_ value: JSONValue) throws(MCPError) {
        guard case .object(let object) = value, case .string(let name)? = object["name"], !name.isEmpty else {
            throw MCPError(code: .protocolViolation, message: "a tools/list entry without a name")
        }
        guard case .object? = object["inputSchema"] else {
            throw MCPError(code: .protocolViolation, message: "tool '\(MCPToolNaming.printable(name))' has no inputSchema object")
        }
        let annotations = MCPToolAnnotations(object["annotations"])
        self.init(
            name: name, title: object["title"]?.stringValue ?? annotations.title, description: object["description"]?.stringValue,
            inputSchema: object["inputSchema"] ?? .object(JSONObject()), outputSchema: object["outputSchema"].flatMap { $0 == .null ? nil : $0 },
            annotations: annotations
        )
    }
}

/// A server's hints about a tool, with the specification's defaults for hints it left out.
public struct MCPToolAnnotations: Sendable, Hashable {
    /// A display title.
    public var title: String?
    /// The tool changes nothing (default `false`).
    public var readOnlyHint: Bool
    /// The tool may destroy or overwrite data (default `true`; meaningful only when not read-only).
    public var destructiveHint: Bool
    /// Calling it again with the same arguments has no further effect (default `false`).
    public var idempotentHint: Bool
    /// The tool reaches outside the server (default `true`).
    public var openWorldHint: Bool

    /// Creates hints; the defaults are the specification's.
    public init(title: String? = nil, readOnlyHint: Bool = false, destructiveHint: Bool = true, idempotentHint: Bool = false, openWorldHint: Bool = true) {
        self.title = title
        self.readOnlyHint = readOnlyHint
        self.destructiveHint = destructiveHint
        self.idempotentHint = idempotentHint
        self.openWorldHint = openWorldHint
    }

    /// Reads an `annotations` object; anything missing or of the wrong type keeps its default.
    init(_ value: JSONValue?) {
        self.init(
            title: value?["title"]?.stringValue, readOnlyHint: value?["readOnlyHint"]?.boolValue ?? false,
            destructiveHint: value?["destructiveHint"]?.boolValue ?? true, idempotentHint: value?["idempotentHint"]?.boolValue ?? false,
            openWorldHint: value?["openWorldHint"]?.boolValue ?? true
        )
    }
}
