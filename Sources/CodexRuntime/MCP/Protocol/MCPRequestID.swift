public import CodexSchema

/// A JSON-RPC request ID: an integer or a string. The client numbers its own requests; a server's
/// requests keep whatever ID the server chose.
public enum MCPRequestID: Sendable, Hashable, CustomStringConvertible {
    /// An integer ID.
    case number(Int64)
    /// A string ID.
    case string(String)

    /// The ID as JSON.
    public var jsonValue: JSONValue {
        switch self {
        case .number(let value): return .number(JSONNumber(value))
        case .string(let value): return .string(value)
        }
    }

    /// The ID as written on the wire (a string ID in quotes).
    public var description: String {
        switch self {
        case .number(let value): return String(value)
        case .string(let value): return "\"\(value)\""
        }
    }

    /// The ID in `value`, when it is an integer or a string.
    init?(_ value: JSONValue) {
        switch value {
        case .string(let text): self = .string(text)
        case .number(let number):
            guard let integer = number.int64Value else { return nil }
            self = .number(integer)
        default: return nil
        }
    }
}
