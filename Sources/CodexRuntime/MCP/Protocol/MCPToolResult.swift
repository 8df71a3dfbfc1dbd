public import CodexSchema
public import Foundation

/// One block of an MCP tool result.
public enum MCPContent: Sendable, Hashable {
    /// Text.
    case text(String)
    /// An image: its bytes (decoded from base64) and the MIME type the server named.
    case image(Data, mimeType: String)
    /// Audio: its bytes and MIME type.
    case audio(Data, mimeType: String)
    /// A link to a resource the server can read.
    case resourceLink(uri: String, name: String, mimeType: String?)
    /// An embedded text resource.
    case textResource(uri: String, mimeType: String?, text: String)
    /// An embedded binary resource.
    case blobResource(uri: String, mimeType: String?, data: Data)
    /// A block type this client does not know, kept with its `type`.
    case unknown(type: String)
}

/// The result of `tools/call`.
public struct MCPToolResult: Sendable, Hashable {
    /// The content blocks, in order.
    public var content: [MCPContent]
    /// The structured result, when the tool returned one.
    public var structuredContent: JSONValue?
    /// Whether the tool reports a failure (the model should see it; the call itself worked).
    public var isError: Bool

    /// Creates a result.
    public init(content: [MCPContent], structuredContent: JSONValue? = nil, isError: Bool = false) {
        self.content = content
        self.structuredContent = structuredContent
        self.isError = isError
    }

    /// Reads a `tools/call` result.
    init(_ value: JSONValue) throws(MCPError) {
        guard case .object(let object) = value else { throw MCPError(code: .protocolViolation, message: "a tools/call result is not an object") }
        var blocks: [MCPContent] = []
        if let content = object["content"] {
            guard case .array(let elements) = content else { throw MCPError(code: .protocolViolation, message: "a tools/call result's content is not an array") }
            for element in elements { blocks.append(try Self.block(element)) }
        }
        self.init(
            content: blocks, structuredContent: object["structuredContent"].flatMap { $0 == .null ? nil : $0 },
            isError: object["isError"]?.boolValue ?? false
        )
    }

    private static func block(_ value: JSONValue) throws(MCPError) -> MCPContent {
        guard case .string(let type)? = value["type"] else { throw MCPError(code: .protocolViolation, message: "a content block without a type") }
        switch type {
        case "text":
            guard let text = value["text"]?.stringValue else { throw violation("a text block without text") }
            return .text(text)
        case "image", "audio":
            guard let base64 = value["data"]?.stringValue, let mimeType = value["mimeType"]?.stringValue else { throw violation("an \(type) block without data and mimeType") }
            guard let data = Data(base64Encoded: base64) else { throw violation("an \(type) block whose data is not base64") }
            return type == "image" ? .image(data, mimeType: mimeType) : .audio(data, mimeType: mimeType)
        case "resource_link":
            guard let uri = value["uri"]?.stringValue else { throw violation("a resource_link block without a uri") }
            return .resourceLink(uri: uri, name: value["name"]?.stringValue ?? uri, mimeType: value["mimeType"]?.stringValue)
        case "resource":
            guard let resource = value["resource"], let uri = resource["uri"]?.stringValue else { throw violation("a resource block without a resource uri") }
            let mimeType = resource["mimeType"]?.stringValue
            if let text = resource["text"]?.stringValue { return .textResource(uri: uri, mimeType: mimeType, text: text) }
            guard let blob = resource["blob"]?.stringValue, let data = Data(base64Encoded: blob) else { throw violation("a resource block with neither text nor base64 blob") }
            return .blobResource(uri: uri, mimeType: mimeType, data: data)
        default:
            return .unknown(type: type)
        }
    }

    private static func violation(_ message: String) -> MCPError { MCPError(code: .protocolViolation, message: message) }
}
