public import CodexSchema

/// The response contract of a structured turn: a named JSON schema that CodexKit sends as the Responses
/// `text.format` (`json_schema`) and enforces locally before decoding.
///
/// ```swift
/// static let responseFormat = AgentStructuredOutputFormat(
///     name: "shipping_reply_draft",
///     description: "A concise shipping support reply draft.",
///     schema: .object(
///         properties: ["subject": .string(), "urgency": .string(enum: ["low", "medium", "high"])],
///         required: ["subject", "urgency"],
///         additionalProperties: false
///     )
/// )
/// ```
public struct AgentStructuredOutputFormat: Sendable, Hashable, Codable {
    /// The format name sent to the provider (letters, digits, `_` and `-`, at most 64 characters).
    public var name: String
    /// An optional description of the output for the model.
    public var description: String?
    /// The schema document.
    public var schema: JSONValue
    /// Whether the provider enforces the schema strictly. Default `true`.
    public var strict: Bool

    /// A format from a ``JSONSchema`` built with the DSL.
    public init(name: String, description: String? = nil, schema: JSONSchema, strict: Bool = true) {
        self.init(name: name, description: description, rawSchema: schema.jsonValue, strict: strict)
    }

    /// A format from a raw schema document (the escape hatch for anything the DSL lacks); it must still
    /// use only the supported keyword subset.
    public init(name: String, description: String? = nil, rawSchema: JSONValue, strict: Bool = true) {
        self.name = name
        self.description = description
        self.schema = rawSchema
        self.strict = strict
    }

    /// Checks the name and compiles the schema.
    ///
    /// - Returns: The compiled validator.
    /// - Throws: ``AgentRuntimeError`` with `invalid_response_format`, or with `unsupported_schema_keyword`
    ///   (the schema error is the underlying error).
    public func validator(limits: JSONSchemaLimits = .init()) throws -> JSONSchemaValidator {
        guard Self.isValidName(name) else {
            throw AgentRuntimeError(
                code: .invalidResponseFormat,
                message: "response format names use 1 to 64 letters, digits, '_' or '-'"
            )
        }
        do {
            return try JSONSchemaValidator(schema: schema, limits: limits)
        } catch {
            let code: AgentRuntimeError.Code = error.code == .unsupportedSchemaKeyword ? .unsupportedSchemaKeyword : .invalidResponseFormat
            throw AgentRuntimeError(code: code, message: "response format '\(name)' has an unusable schema: \(error.message)", underlying: error)
        }
    }

    /// Whether `name` is a valid provider format name: 1…64 of `[A-Za-z0-9_-]`.
    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }
}

/// A `Decodable` type with the response contract that produces it.
///
/// ```swift
/// struct ShippingReplyDraft: AgentStructuredOutput {
///     let subject: String
///     let urgency: String
///     static let responseFormat = AgentStructuredOutputFormat(name: "shipping_reply_draft", schema: …)
/// }
/// ```
public protocol AgentStructuredOutput: Decodable, Sendable {
    /// The contract transmitted, validated and decoded for this type.
    static var responseFormat: AgentStructuredOutputFormat { get }
}

/// Options for streamed structured output.
public struct AgentStructuredStreamingOptions: Sendable, Hashable, Codable {
    /// Whether the turn fails when the model produces no structured payload. Default `true`.
    public var required: Bool

    /// Creates options.
    public init(required: Bool = true) {
        self.required = required
    }
}

/// What is persisted with an assistant message that carried a committed structured payload.
public struct AgentStructuredOutputMetadata: Sendable, Hashable, Codable {
    /// The format's name.
    public var formatName: String
    /// The committed payload (already validated).
    public var payload: JSONValue
    /// The SHA-256 of the payload's canonical JSON, hex.
    public var payloadDigest: String

    /// Creates metadata; the digest is computed from the payload.
    public init(formatName: String, payload: JSONValue) {
        self.formatName = formatName
        self.payload = payload
        self.payloadDigest = SHA256.hexDigest(of: payload.canonicalBytes())
    }

    /// Metadata for a parsed payload, `document` being the parse `payload` was built from: the digest
    /// hashes the document's canonical bytes as they are written from its tape (the same digest as
    /// ``init(formatName:payload:)``, without walking the value or holding its canonical bytes at once).
    package init(formatName: String, payload: JSONValue, parsedAs document: JSONDocument) {
        self.init(formatName: formatName, payload: payload, payloadDigest: Self.payloadDigest(of: document))
    }

    /// Metadata whose digest was computed already, by ``payloadDigest(of:)`` of the document `payload`
    /// was built from.
    package init(formatName: String, payload: JSONValue, payloadDigest: String) {
        self.formatName = formatName
        self.payload = payload
        self.payloadDigest = payloadDigest
    }

    /// The digest ``init(formatName:payload:)`` stores, hashed from a parsed document's canonical bytes as
    /// they are written from its tape (without building the value or holding the bytes at once).
    package static func payloadDigest(of document: JSONDocument) -> String {
        var hasher = SHA256()
        document.withCanonicalChunks { hasher.update($0) }
        return SHA256.hexString(hasher.finalize())
    }
}

/// A structured payload as seen during a stream: a validated partial snapshot or the committed value.
public struct AgentStructuredOutputSnapshot: Sendable, Hashable, Codable {
    /// The format's name.
    public var formatName: String
    /// The JSON value so far (partial) or final (committed).
    public var value: JSONValue
    /// Whether this is the committed, fully validated payload.
    public var isCommitted: Bool

    /// Creates a snapshot.
    public init(formatName: String, value: JSONValue, isCommitted: Bool) {
        self.formatName = formatName
        self.value = value
        self.isCommitted = isCommitted
    }
}
