import CodexCore
import CodexSchema
import Foundation

/// Turns an MCP tool result into the runtime's result envelope.
enum MCPToolResultMapping {
    /// The envelope for `result` (see ``MCPClient/agentTools(policy:overrides:)`` for the rules).
    ///
    /// - Parameter attachImage: Keeps an image block's bytes with the turn's tool images; returns whether
    ///   they were kept (the text the model sees says which).
    static func envelope(
        _ result: MCPToolResult, for invocation: ToolInvocation, outputValidator: JSONSchemaValidator?, attachImage: (Data) -> Bool = { _ in false }
    ) -> ToolResultEnvelope {
        var blocks: [ToolResultContent] = []
        var texts: [String] = []
        for block in result.content.prefix(ToolResultEnvelope.maximumContentItems - 1) {
            switch block {
            case .text(let text):
                texts.append(text)
                blocks.append(.text(text))
            case .image(let data, let mimeType):
                if attachImage(data) {
                    blocks.append(.text("[image: \(printable(mimeType)), \(data.count) bytes, kept with the conversation's images]"))
                } else {
                    blocks.append(.text("[image omitted: \(printable(mimeType)), \(data.count) bytes; not a complete image within the limits]"))
                }
            case .audio(let data, let mimeType):
                blocks.append(.text("[audio omitted: \(printable(mimeType)), \(data.count) bytes; audio is not passed to the model]"))
            case .resourceLink(let uri, let name, let mimeType):
                blocks.append(.text("[resource link: \(name) <\(uri)>" + (mimeType.map { ", \(printable($0))" } ?? "") + "]"))
            case .textResource(let uri, _, let text):
                blocks.append(.text("[resource <\(uri)>]\n\(text)"))
            case .blobResource(let uri, let mimeType, let data):
                blocks.append(.text("[binary resource omitted: <\(uri)>" + (mimeType.map { ", \(printable($0))" } ?? "") + ", \(data.count) bytes]"))
            case .unknown(let type):
                blocks.append(.text("[content of type \(printable(type)) omitted]"))
            }
        }
        var status: ToolResultEnvelope.Status = result.isError ? .failure : .success
        if let structured = result.structuredContent {
            if let outputValidator, !result.isError {
                let valid = (try? outputValidator.validate(structured).isValid) ?? false
                if !valid {
                    status = .failure
                    blocks = [.text("The tool's structured result does not match its declared output schema; it was discarded.")]
                    return ToolResultEnvelope(invocationID: invocation.id, toolName: invocation.toolName, status: status, content: blocks)
                }
            }
            // The specification asks servers to repeat structured results as text; add it when none did.
            let carried = texts.contains { text in (try? JSONValue(parsing: text)) == structured }
            if !carried { blocks.append(.text(structured.compactString())) }
        }
        if blocks.isEmpty { blocks = [.text("")] }
        return ToolResultEnvelope(invocationID: invocation.id, toolName: invocation.toolName, status: status, content: blocks)
    }

    private static func printable(_ text: String) -> String { MCPToolNaming.printable(text) }
}
