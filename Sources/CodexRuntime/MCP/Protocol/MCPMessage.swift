import CodexSchema

/// The error object of a JSON-RPC error reply.
struct MCPRemoteError: Error, Sendable, Hashable {
    /// The JSON-RPC error code.
    var code: Int
    /// The server's message.
    var message: String
    /// Extra data, when the server gave some.
    var data: JSONValue?

    /// JSON-RPC's "parse error".
    static let parseError = -32700
    /// JSON-RPC's "invalid request".
    static let invalidRequest = -32600
    /// JSON-RPC's "method not found": also what a client answers a server request it does not support.
    static let methodNotFound = -32601
    /// JSON-RPC's "invalid params" (also an unknown tool, in the MCP specification).
    static let invalidParams = -32602
    /// JSON-RPC's "internal error".
    static let internalError = -32603
    /// The header-mismatch error of the stateless protocol revision.
    static let headerMismatch = -32020
    /// The missing-client-capability error of the stateless protocol revision.
    static let missingRequiredClientCapability = -32021
    /// The unsupported-protocol-version error of the stateless protocol revision.
    static let unsupportedProtocolVersion = -32022
}

/// One JSON-RPC 2.0 message, as MCP exchanges them: one per line on stdio, one per POST or SSE event
/// over HTTP.
enum MCPMessage: Sendable, Hashable {
    /// A request the receiver must answer.
    case request(id: MCPRequestID, method: String, params: JSONValue?)
    /// A notification (no reply).
    case notification(method: String, params: JSONValue?)
    /// A successful reply.
    case result(id: MCPRequestID, result: JSONValue)
    /// An error reply; the ID is absent when the request could not be read.
    case error(id: MCPRequestID?, MCPRemoteError)

    /// The deepest nesting accepted in a message (tool schemas nest; 128 leaves room for them).
    static let maximumDepth = 128

    /// Decodes one line or body: a message, or (from a 2025-03-26 peer) a batch of them.
    ///
    /// - Parameter maximumBytes: The largest message accepted; checked before parsing.
    /// - Throws: ``MCPError`` `mcp_message_too_large` or `mcp_malformed_message`.
    static func decode(_ bytes: some Collection<UInt8>, maximumBytes: Int) throws(MCPError) -> [MCPMessage] {
        guard bytes.count <= maximumBytes else {
            throw MCPError(code: .messageTooLarge, message: "a message of \(bytes.count) bytes is over the \(maximumBytes)-byte limit")
        }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes, options: JSONParsingOptions(maximumDepth: maximumDepth, maximumBytes: maximumBytes))
        } catch {
            throw MCPError(code: .malformedMessage, message: "a message is not JSON (\(error.code.rawValue))", underlying: error)
        }
        if case .array(let elements) = value {
            guard !elements.isEmpty else { throw MCPError(code: .malformedMessage, message: "an empty batch") }
            var messages: [MCPMessage] = []
            messages.reserveCapacity(elements.count)
            for element in elements { messages.append(try MCPMessage(element)) }
            return messages
        }
        return [try MCPMessage(value)]
    }

    /// Reads one message object.
    init(_ value: JSONValue) throws(MCPError) {
        guard case .object(let object) = value else { throw Self.malformed("a message is not a JSON object") }
        guard object["jsonrpc"] == .string("2.0") else { throw Self.malformed("a message lacks \"jsonrpc\": \"2.0\"") }
        let params = object["params"]
        if let params {
            switch params {
            case .object, .array: break
            default: throw Self.malformed("a message's params are neither an object nor an array")
            }
        }
        if let methodValue = object["method"] {
            guard case .string(let method) = methodValue, !method.isEmpty else { throw Self.malformed("a message's method is not a string") }
            guard let idValue = object["id"] else {
                self = .notification(method: method, params: params)
                return
            }
            guard let id = MCPRequestID(idValue) else { throw Self.malformed("a request's id is neither an integer nor a string") }
            self = .request(id: id, method: method, params: params)
            return
        }
        let id = object["id"].flatMap(MCPRequestID.init)
        if let result = object["result"] {
            guard let id, object["error"] == nil else { throw Self.malformed("a result without an id, or with an error too") }
            self = .result(id: id, result: result)
            return
        }
        guard case .object(let error)? = object["error"] else { throw Self.malformed("a message is neither a request, a notification nor a reply") }
        guard case .number(let number)? = error["code"], let code = number.intValue else { throw Self.malformed("an error reply without an integer code") }
        guard case .string(let message)? = error["message"] else { throw Self.malformed("an error reply without a message") }
        if let idValue = object["id"], idValue != .null, id == nil { throw Self.malformed("an error reply's id is neither an integer nor a string") }
        self = .error(id: id, MCPRemoteError(code: code, message: message, data: error["data"]))
    }

    /// The message as one line of compact JSON, without the newline (JSON escapes every newline inside
    /// strings, so the text never contains one).
    func encoded() -> [UInt8] { jsonValue.compactBytes() }

    /// The message as JSON.
    var jsonValue: JSONValue {
        var object = JSONObject()
        object["jsonrpc"] = .string("2.0")
        switch self {
        case .request(let id, let method, let params):
            object["id"] = id.jsonValue
            object["method"] = .string(method)
            if let params { object["params"] = params }
        case .notification(let method, let params):
            object["method"] = .string(method)
            if let params { object["params"] = params }
        case .result(let id, let result):
            object["id"] = id.jsonValue
            object["result"] = result
        case .error(let id, let error):
            object["id"] = id?.jsonValue ?? .null
            var body = JSONObject()
            body["code"] = .number(JSONNumber(error.code))
            body["message"] = .string(error.message)
            if let data = error.data { body["data"] = data }
            object["error"] = .object(body)
        }
        return .object(object)
    }

    private static func malformed(_ message: String) -> MCPError { MCPError(code: .malformedMessage, message: message) }
}
