/// Whether a schema fits the Responses API's strict mode for function tools and structured output,
/// judged conservatively (a schema that might be refused is sent non-strict instead): the root is an
/// object schema; every object schema sets `additionalProperties: false` and lists every one of its
/// properties in `required`; and every schema uses only the keywords strict mode is known to take
/// (`type`, `properties`, `required`, `additionalProperties`, `items`, `enum`, `const`, `anyOf`,
/// `$defs`, `definitions`, `$ref`, `description`, `title`, and the numeric, string and array bounds).
/// Sub-schemas are visited under `properties`, `items`, `anyOf`, `$defs` and `definitions`.
///
/// ```swift
/// JSONSchemaStrictMode.accepts(JSONSchema.object(properties: ["sku": .string()]).jsonValue) // true
/// JSONSchemaStrictMode.accepts(["type": "object"])                                           // false
/// ```
public enum JSONSchemaStrictMode {
    /// The keywords a strict schema may use.
    static let allowedKeywords: Set<String> = [
        "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "$defs", "definitions", "$ref",
        "description", "title", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
        "minItems", "maxItems",
    ]

    /// Whether `schema` fits strict mode. Checking is iterative and bounded by the schema's size.
    public static func accepts(_ schema: JSONValue) -> Bool {
        guard case .object(let root) = schema, root["type"] == .string("object") else { return false }
        var pending: [JSONValue] = [schema]
        while let next = pending.popLast() {
            guard case .object(let object) = next else { return false }
            guard object.keys.allSatisfy(allowedKeywords.contains) else { return false }
            if object["type"] == .string("object") || object["properties"] != nil {
                guard object["additionalProperties"] == .bool(false) else { return false }
                let properties = object["properties"]?.objectValue?.keys ?? []
                let required = Set((object["required"]?.arrayValue ?? []).compactMap(\.stringValue))
                guard properties.allSatisfy(required.contains) else { return false }
            }
            for key in ["properties", "$defs", "definitions"] {
                if let children = object[key]?.objectValue { pending.append(contentsOf: children.values) }
            }
            if let children = object["anyOf"]?.arrayValue { pending.append(contentsOf: children) }
            if let items = object["items"] { pending.append(items) }
        }
        return true
    }
}
