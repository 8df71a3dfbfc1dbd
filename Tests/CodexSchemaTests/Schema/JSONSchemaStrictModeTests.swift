import CodexSchema
import Testing

/// Which schemas are sent with `strict: true`: only those strict mode is known to take.
@Suite struct JSONSchemaStrictModeTests {
    @Test func builderObjectsFit() {
        #expect(JSONSchemaStrictMode.accepts(JSONSchema.object(properties: ["sku": .string(), "tags": .array(items: .string())]).jsonValue))
        #expect(JSONSchemaStrictMode.accepts(JSONSchema.object(properties: ["note": .nullable(.string())]).jsonValue))
    }

    @Test(arguments: [
        ["type": "object"],
        ["type": "object", "properties": ["a": ["type": "string"]], "additionalProperties": false],
        ["type": "object", "properties": ["a": ["type": "string"]], "required": ["a"]],
        ["type": "object", "properties": [:], "required": [], "additionalProperties": false, "not": ["type": "null"]],
        ["type": "object", "properties": ["a": ["type": "string", "pattern": "^x"]], "required": ["a"], "additionalProperties": false],
        ["type": "object", "properties": ["a": ["oneOf": [["type": "string"]]]], "required": ["a"], "additionalProperties": false],
        ["type": "array", "items": ["type": "string"]],
    ] as [JSONValue])
    func anythingElseIsSentNonStrict(schema: JSONValue) {
        #expect(!JSONSchemaStrictMode.accepts(schema))
    }
}
