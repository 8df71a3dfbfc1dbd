import CodexSchema

/// One step of a streamed structured turn, as ``StructuredStreamParser`` reports it.
enum StructuredStreamOutput: Sendable, Equatable {
    /// Prose for the user, outside the structured-output frame (never contains part of a marker).
    case text(String)
    /// A snapshot of the payload so far that parses and passes `partial` schema validation.
    /// `bytes` is the snapshot's JSON text (the payload up to a safe cut plus closing brackets).
    case partial(JSONValue, bytes: [UInt8])
    /// The complete payload, parsed and validated in full at the close marker.
    case committed(StructuredStreamCommit)
}

/// The payload of a closed structured-output frame that passed full schema validation.
struct StructuredStreamCommit: Sendable, Equatable {
    /// The parsed payload.
    let value: JSONValue
    /// The exact JSON text between the markers, without surrounding whitespace, so the caller can
    /// decode the model's own text with `JSONDecoder` (integers keep their full precision).
    let bytes: [UInt8]
    /// The parsed form of ``bytes`` the value was built from, for decoding without walking the value.
    let document: JSONDocument

    /// A commit of `value` parsed from `bytes`; `document` defaults to one built from the value.
    init(value: JSONValue, bytes: [UInt8], document: JSONDocument? = nil) {
        self.value = value
        self.bytes = bytes
        self.document = document ?? JSONDocument(value)
    }

    /// Equal payloads and texts (the document is derived from them).
    static func == (lhs: StructuredStreamCommit, rhs: StructuredStreamCommit) -> Bool {
        lhs.value == rhs.value && lhs.bytes == rhs.bytes
    }
}

/// The full-validation failures of a structured payload, attached as ``AgentRuntimeError/underlying``
/// (not part of the error's description: instance pointers may contain model-written keys).
struct StructuredOutputSchemaViolation: Error, Sendable, Equatable {
    /// Every failure the validator reported.
    let errors: [JSONValidationError]
}
