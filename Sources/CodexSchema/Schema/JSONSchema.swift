/// A builder for the JSON schemas CodexKit sends and validates, rendering to a ``JSONValue``.
///
/// ```swift
/// let schema: JSONSchema = .object(
///     properties: [
///         "subject": .string(),
///         "urgency": .string(enum: ["low", "medium", "high"]),
///         "tags": .array(items: .string()),
///         "note": .nullable(.string()),
///     ],
///     required: ["subject", "urgency", "tags", "note"],
///     additionalProperties: false
/// )
/// schema.jsonValue["type"] // "object"
/// ```
///
/// Every builder case renders into the supported keyword subset, so any `JSONSchema` compiles with
/// ``JSONSchemaValidator``. Use ``raw(_:)`` for anything the builders do not cover.
public struct JSONSchema: Sendable, Hashable {
    /// The schema document.
    public let jsonValue: JSONValue

    /// Wraps a schema document as it is.
    public init(jsonValue: JSONValue) {
        self.jsonValue = jsonValue
    }

    /// A string, optionally restricted to the listed values.
    public static func string(enum values: [String]? = nil) -> JSONSchema {
        var members: JSONObject = ["type": "string"]
        if let values { members["enum"] = .array(values.map(JSONValue.string)) }
        return JSONSchema(jsonValue: .object(members))
    }

    /// An integer (a number with no fractional part; `1.0` counts).
    public static let integer = JSONSchema(jsonValue: ["type": "integer"])

    /// Any number.
    public static let number = JSONSchema(jsonValue: ["type": "number"])

    /// `true` or `false`.
    public static let boolean = JSONSchema(jsonValue: ["type": "boolean"])

    /// An array whose every element matches `items`.
    public static func array(items: JSONSchema) -> JSONSchema {
        JSONSchema(jsonValue: ["type": "array", "items": items.jsonValue])
    }

    /// An object with the given properties, kept in the order written (models tend to produce
    /// properties in schema order, so put the ones that should come first first).
    ///
    /// - Parameters:
    ///   - properties: Property names and their schemas, as a dictionary literal.
    ///   - required: Names that must be present. `nil` (the default) requires every property, as the
    ///     Responses API's strict mode expects.
    ///   - additionalProperties: Whether other properties are allowed. Default `false`.
    public static func object(
        properties: KeyValuePairs<String, JSONSchema>,
        required: [String]? = nil,
        additionalProperties: Bool = false
    ) -> JSONSchema {
        let propertyObject = JSONObject(properties.map { ($0.key, $0.value.jsonValue) })
        let requiredNames = required ?? propertyObject.keys
        return JSONSchema(jsonValue: [
            "type": "object",
            "properties": .object(propertyObject),
            "required": .array(requiredNames.map(JSONValue.string)),
            "additionalProperties": .bool(additionalProperties),
        ])
    }

    /// `schema` or `null`, rendered as `{"anyOf": [schema, {"type": "null"}]}`.
    public static func nullable(_ schema: JSONSchema) -> JSONSchema {
        JSONSchema(jsonValue: ["anyOf": [schema.jsonValue, ["type": "null"]]])
    }

    /// A raw schema document, for keywords the builders do not cover (still checked at compile time).
    public static func raw(_ value: JSONValue) -> JSONSchema {
        JSONSchema(jsonValue: value)
    }
}
