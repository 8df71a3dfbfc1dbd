import CodexCore

/// How MCP tools are named for the model: `<server>__<tool>`, within the Responses API's function-name
/// rules (letters, digits, `_` and `-`; at most 64 characters).
///
/// Every other character of the tool's name becomes `_`. A name that would be longer than 64
/// characters, or that two of a server's tools would share after that replacement, is cut to 55
/// characters and ends with `_` and the first 8 hex digits of the SHA-256 of `<server>\n<tool>`. The
/// tool that sorts first by its original name keeps the plain name when two collide, so the result does
/// not depend on the order the server lists its tools in.
public enum MCPToolNaming {
    /// The longest name the Responses API accepts for a function.
    public static let maximumLength = 64

    /// The model-facing names of a server's tools, keyed by the tools' own names.
    public static func agentToolNames(server: String, tools: [String]) -> [String: String] {
        var names: [String: String] = [:]
        var taken: Set<String> = []
        for tool in Set(tools).sorted() {
            let plain = server + "__" + String(decoding: tool.utf8.map { isNameByte($0) ? $0 : UInt8(ascii: "_") }, as: UTF8.self)
            let name = plain.utf8.count <= maximumLength && !taken.contains(plain) ? plain : hashed(server: server, tool: tool, plain: plain)
            taken.insert(name)
            names[tool] = name
        }
        return names
    }

    /// Whether `byte` may appear in a tool or server name.
    static func isNameByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    private static func hashed(server: String, tool: String, plain: String) -> String {
        let digest = SHA256.hexDigest(of: Array("\(server)\n\(tool)".utf8)).prefix(8)
        return String(decoding: plain.utf8.prefix(maximumLength - 9), as: UTF8.self) + "_" + digest
    }

    /// A server-supplied name made safe for a log line or an error: printable ASCII, at most 64 bytes.
    static func printable(_ name: String) -> String {
        String(decoding: name.utf8.prefix(64).map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}
