/// Whether a schema fits the Responses API's strict mode for function tools and structured output:
/// the root is an object schema, and every object schema in it (under `properties`, `items`, `anyOf`,
/// `oneOf`, `allOf`, `$defs` and `definitions`) sets `additionalProperties: false` and lists every one
/// of its properties in `required`.
///
/// ```swift
/// JSONSchemaStrictMode.accepts(JSONSchema.object(properties: ["sku": .string()]).jsonValue) // true
/// JSONSchemaStrictMode.accepts(["type": "object"])                                           // false
/// ```
public enum JSONSchemaStrictMode {
    /// Whether `schema` fits strict mode. Checking is iterative and bounded by the schema's size.
    public static func accepts(_ schema: JSONValue) -> Bool {
        guard case .object(let root) = schema, root["type"] == .string("object") else { return false }
        var pending: [JSONValue] = [schema]
        while let next = pending.popLast() {
            guard case .object(let object) = next else { continue }
            if object["type"] == .string("object") || object["properties"] != nil {
                guard object["additionalProperties"] == .bool(false) else { return false }
                let properties = object["properties"]?.objectValue?.keys ?? []
                let required = Set((object["required"]?.arrayValue ?? []).compactMap(\.stringValue))
                guard properties.allSatisfy(required.contains) else { return false }
            }
            for key in ["properties", "$defs", "definitions"] {
                if let children = object[key]?.objectValue { pending.append(contentsOf: children.values) }
            }
            for key in ["anyOf", "oneOf", "allOf"] {
                if let children = object[key]?.arrayValue { pending.append(contentsOf: children) }
            }
            if let items = object["items"] { pending.append(items) }
        }
        return true
    }
}
