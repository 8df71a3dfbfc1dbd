/// How strictly an instance is validated.
public enum JSONValidationMode: Sendable, Hashable {
    /// Every supported keyword applies.
    case full
    /// For snapshots of a value still being streamed: `required`, `minLength`, `minItems` and
    /// `minProperties` are skipped; type, `enum`/`const`, `additionalProperties` and the maximum-size
    /// checks still apply. Inside `oneOf` at least one subschema must match (a prefix may match several);
    /// subschemas under `not` are evaluated in full.
    case partial
}

/// One validation failure.
public struct JSONValidationError: Sendable, Hashable, CustomStringConvertible {
    /// The JSON pointer of the failing value in the instance (`""` for the root).
    public let instancePointer: String
    /// The JSON pointer of the failing keyword in the schema document, e.g. `/properties/a/type`.
    public let schemaPointer: String
    /// The failing keyword, e.g. `type`, `required`, `anyOf`, or `false` for a `false` schema.
    public let keyword: String
    /// A short explanation. It names keywords, property names from the schema and limits, never
    /// instance values.
    public let message: String

    /// Creates a validation error.
    public init(instancePointer: String, schemaPointer: String, keyword: String, message: String) {
        self.instancePointer = instancePointer
        self.schemaPointer = schemaPointer
        self.keyword = keyword
        self.message = message
    }

    /// `instancePointer: message (keyword at schemaPointer)`.
    public var description: String {
        "\(instancePointer.isEmpty ? "(root)" : instancePointer): \(message) (\(keyword) at \(schemaPointer.isEmpty ? "(root)" : schemaPointer))"
    }
}

/// The outcome of a validation: valid, or the failures found.
public struct JSONValidationResult: Sendable, Hashable {
    /// The failures, in a stable order (schema property order, then array order); at most
    /// ``JSONSchemaLimits/maximumReportedErrors`` of them. Empty when valid.
    public let errors: [JSONValidationError]
    /// How many failures there were, reported or not.
    public let errorCount: Int

    /// Whether the instance is valid.
    public var isValid: Bool { errors.isEmpty }

    /// Whether more failures were found than ``errors`` reports.
    public var isTruncated: Bool { errorCount > errors.count }

    /// Creates a result.
    /// - Parameters:
    ///   - errors: The reported failures.
    ///   - errorCount: How many there were in all (at least `errors.count`; default `errors.count`).
    public init(errors: [JSONValidationError], errorCount: Int? = nil) {
        self.errors = errors
        self.errorCount = max(errors.count, errorCount ?? errors.count)
    }

    /// A verdict-only "invalid" (the fast path records no details).
    static let invalidVerdict = JSONValidationResult(errors: [
        JSONValidationError(instancePointer: "", schemaPointer: "", keyword: "", message: "invalid"),
    ])
}
