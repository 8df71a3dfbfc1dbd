import CodexSchema
import CodexTestSupport
import Testing

@Suite struct JSONSchemaValidatorTests {
    static let shipping: JSONSchema = .object(
        properties: [
            "subject": .string(),
            "reply": .string(),
            "urgency": .string(enum: ["low", "medium", "high"]),
            "tags": .array(items: .string()),
            "note": .nullable(.string()),
        ],
        required: ["subject", "reply", "urgency"],
        additionalProperties: false
    )

    private func errors(_ schema: JSONValue, _ instance: String, mode: JSONValidationMode = .full) throws -> [String] {
        let validator = try JSONSchemaValidator(schema: schema)
        let fromValue = try validator.validate(try JSONValue(parsing: instance), mode: mode)
        let fromBytes = try validator.validate(jsonBytes: Array(instance.utf8), mode: mode)
        let fromDocument = try validator.validate(try JSONDocument(parsing: Array(instance.utf8)), mode: mode)
        #expect(fromValue == fromBytes)
        #expect(fromValue == fromDocument)
        #expect(try validator.isValid(try JSONValue(parsing: instance), mode: mode) == fromValue.isValid)
        #expect(try validator.isValid(jsonBytes: Array(instance.utf8), mode: mode) == fromValue.isValid)
        return fromValue.errors.map { "\($0.instancePointer)|\($0.schemaPointer)|\($0.keyword)" }
    }

    @Test func reportsEveryErrorWithPointers() throws {
        let found = try errors(
            Self.shipping.jsonValue,
            #"{"subject": 1, "urgency": "urgent", "tags": ["a", 2], "extra": true, "other": null}"#
        )
        #expect(found == [
            "/subject|/properties/subject/type|type",
            "/urgency|/properties/urgency/enum|enum",
            "/tags/1|/properties/tags/items/type|type",
            "/extra|/additionalProperties|additionalProperties",
            "/other|/additionalProperties|additionalProperties",
            "|/required|required",
        ])
    }

    @Test func messagesNameKeywordsNotInstanceValues() throws {
        let validator = try JSONSchemaValidator(schema: Self.shipping)
        let result = try validator.validate(try JSONValue(parsing: #"{"subject":"SECRET-TEXT","reply":7,"urgency":"SECRET-LEVEL"}"#))
        #expect(result.errors.count == 2)
        for error in result.errors {
            #expect(!error.description.contains("SECRET"))
        }
        #expect(result.errors.map(\.message) == ["expected string, found integer", "value is not one of the 3 allowed values"])
    }

    @Test func missingRequiredPropertiesAreEachNamed() throws {
        let validator = try JSONSchemaValidator(schema: Self.shipping)
        let result = try validator.validate([:])
        #expect(result.errors.map(\.message) == [
            "missing required property \"subject\"", "missing required property \"reply\"", "missing required property \"urgency\"",
        ])
    }

    @Test func partialModeRelaxesOnlyRequiredAndMinimums() throws {
        let schema: JSONValue = [
            "type": "object",
            "properties": [
                "name": ["type": "string", "minLength": 5, "maxLength": 8],
                "items": ["type": "array", "minItems": 2, "maxItems": 3, "items": ["enum": ["a", "b"]]],
                "meta": ["type": "object", "minProperties": 2],
            ],
            "required": ["name", "items", "meta"],
            "additionalProperties": false,
        ]
        #expect(try errors(schema, #"{"name": "ab", "items": ["a"], "meta": {}}"#, mode: .partial).isEmpty)
        #expect(try errors(schema, #"{}"#, mode: .partial).isEmpty)
        #expect(try errors(schema, #"{"name": "ab"}"#) == [
            "/name|/properties/name/minLength|minLength", "|/required|required", "|/required|required",
        ])
        #expect(try errors(schema, #"{"name": "abcdefghi", "items": ["a", "b", "c", "d"], "x": 1}"#, mode: .partial) == [
            "/name|/properties/name/maxLength|maxLength",
            "/items|/properties/items/maxItems|maxItems",
            "/items/2|/properties/items/items/enum|enum",
            "/items/3|/properties/items/items/enum|enum",
            "/x|/additionalProperties|additionalProperties",
        ])
        #expect(try errors(schema, #"{"name": 3, "items": ["c"]}"#, mode: .partial) == [
            "/name|/properties/name/type|type", "/items/0|/properties/items/items/enum|enum",
        ])
    }

    @Test func partialModeLetsOneOfMatchSeveralPrefixes() throws {
        let schema: JSONValue = ["oneOf": [["required": ["a"]], ["required": ["b"]]]]
        #expect(try errors(schema, "{}", mode: .partial).isEmpty)
        #expect(try errors(schema, "{}") == ["|/oneOf|oneOf"])
        #expect(try errors(schema, #"{"a":1,"b":2}"#) == ["|/oneOf|oneOf"])
        #expect(try errors(schema, #"{"a":1}"#).isEmpty)
    }

    @Test func stringLengthCountsUnicodeScalars() throws {
        let schema: JSONValue = ["maxLength": 2, "minLength": 2]
        #expect(try errors(schema, #""💩💩""#).isEmpty)
        #expect(try errors(schema, #""é😀""#).isEmpty)
        #expect(try errors(schema, #""\u00e9\ud83d\ude00""#).isEmpty)
        #expect(try errors(schema, #""abc""#) == ["|/maxLength|maxLength"])
        #expect(try errors(schema, #""😀""#) == ["|/minLength|minLength"])
    }

    @Test func refsResolveRecursivelyAndThroughEscapes() throws {
        let schema: JSONValue = [
            "$defs": ["node": ["type": "object", "properties": ["next": ["$ref": "#/$defs/node"], "v": ["$ref": "#/$defs/a~1b%25"]]]],
            "$ref": "#/$defs/node",
        ]
        var json: JSONValue = ["v": 1]
        for _ in 0..<30 { json = ["next": json, "v": 2] }
        let valid = try JSONSchemaValidator(schema: schema.replacing(defs: ["a/b%": ["type": "integer"]]))
        #expect(try valid.isValid(json))
        #expect(try !valid.isValid(["next": ["v": "x"]]))
        #expect(try valid.validate(["next": ["v": "x"]]).errors.map(\.schemaPointer) == ["/$defs/a~1b%/type"])
    }

    @Test func workLimitStopsExponentialSchemas() async throws {
        // Each level refers twice to the one below, so evaluation doubles per level while the schema stays small.
        var definitions: JSONObject = ["d0": ["type": "string"]]
        for level in 1...40 {
            definitions["d\(level)"] = ["anyOf": [["$ref": .string("#/$defs/d\(level - 1)")], ["$ref": .string("#/$defs/d\(level - 1)")]]]
        }
        let schema: JSONValue = ["$defs": .object(definitions), "$ref": "#/$defs/d40"]
        let small = try JSONSchemaValidator(schema: schema, limits: JSONSchemaLimits(maximumValidationWork: 1000))
        #expect(small.nodeCount < 200)
        let smallError = #expect(throws: CodexSchemaError.self) { try small.isValid(1) }
        #expect(smallError?.code == .schemaWorkLimitExceeded)
        #expect(smallError?.message == "validation needed more than 1000 subschema evaluations")
        // The default limit (10 million evaluations) also stops it; that takes seconds in a debug build,
        // so it runs on its own thread rather than holding one of the cooperative pool's.
        let message = try await runOffCooperativePool { () -> String? in
            do throws(CodexSchemaError) {
                _ = try JSONSchemaValidator(schema: schema).isValid(1)
                return nil
            } catch {
                return error.code == .schemaWorkLimitExceeded ? error.message : "wrong code \(error.code)"
            }
        }
        #expect(message == "validation needed more than 10000000 subschema evaluations")
    }

    /// A `$ref` that comes back to its own schema through `$ref`, `allOf`, `anyOf`, `oneOf` or `not`
    /// alone can evaluate without end: the schema is refused when it is compiled, naming the first `$ref`
    /// on the loop that the loop goes through. Recursion through `properties`, `items` or
    /// `additionalProperties` reaches into the instance, ends with it, and stays allowed.
    @Test func refLoopsThatNeverReachIntoTheInstanceAreRefusedWhenCompiled() throws {
        let message = "$ref leads back to the same schema without reaching into the instance, so evaluation would never end"
        let cases: [(JSONValue, String)] = [
            (["$ref": "#"], "/$ref"),
            (["$defs": ["a": ["$ref": "#/$defs/b"], "b": ["anyOf": [["$ref": "#/$defs/a"]]]], "$ref": "#/$defs/a"], "/$defs/a/$ref"),
            (["not": ["$ref": "#"]], "/not/$ref"),
            (["type": "object", "allOf": [["type": "object"], ["oneOf": [["$ref": "#"]]]]], "/allOf/1/oneOf/0/$ref"),
            // The root's own `$ref` leads elsewhere: the loop's `$ref` is the one under allOf.
            (["$defs": ["x": [:]], "$ref": "#/$defs/x", "allOf": [["$ref": "#"]]], "/allOf/0/$ref"),
        ]
        for (schema, pointer) in cases {
            let error = #expect(throws: CodexSchemaError.self) { try JSONSchemaValidator(schema: schema) }
            #expect(error?.code == .invalidSchema, "\(schema)")
            #expect(error?.schemaPointer == pointer, "\(schema)")
            #expect(error?.message == message)
        }
        let throughItems = try JSONSchemaValidator(schema: ["type": "array", "items": ["$ref": "#"]])
        #expect(try throughItems.isValid([[[], []]]))
        #expect(try !throughItems.isValid([[1]]))
        let throughAdditional = try JSONSchemaValidator(schema: ["type": "object", "additionalProperties": ["anyOf": [["$ref": "#"]]]])
        #expect(try throughAdditional.isValid(["a": ["b": [:]]]))
        #expect(try !throughAdditional.isValid(["a": ["b": 1]]))
    }

    @Test func unsupportedKeywordsAreAllReportedWithPointers() {
        let schema: JSONValue = [
            "type": "object",
            "properties": ["a": ["type": "string", "pattern": "^x", "format": "email"], "$ref": ["type": "string"]],
            "if": ["pattern": "ignored inside an unsupported keyword"],
            "items": [["type": "string"]],
            "default": ["pattern": "data, not a schema"],
            "$defs": ["d": ["$ref": "other.json#/x"]],
        ]
        let error = #expect(throws: CodexSchemaError.self) { try JSONSchemaValidator(schema: schema) }
        #expect(error?.code == .unsupportedSchemaKeyword)
        #expect(error?.unsupportedLocations == ["/properties/a/pattern", "/properties/a/format", "/if", "/items", "/$defs/d/$ref"])
        #expect(error?.schemaPointer == "/properties/a/pattern")
    }

    static let malformed: [(JSONValue, String)] = [
        (["type": "strings"] as JSONValue, "/type"), (["minLength": -1], "/minLength"), (["minLength": 1.5], "/minLength"),
        (["multipleOf": 0], "/multipleOf"), (["required": [1]], "/required"), (["enum": 1], "/enum"),
        (["anyOf": []], "/anyOf"), (["properties": ["a": 1]], "/properties/a"), (["$ref": "#/$defs/missing"], "/$ref"),
        (["$ref": "#/enum/0", "enum": [[:]]] as JSONValue, "/$ref"), (["exclusiveMinimum": true], "/exclusiveMinimum"), ("x", ""),
    ]

    @Test(arguments: malformed)
    func malformedKeywordsAreInvalidSchemas(schema: JSONValue, pointer: String) {
        let error = #expect(throws: CodexSchemaError.self) { try JSONSchemaValidator(schema: schema) }
        #expect(error?.code == .invalidSchema)
        #expect(error?.schemaPointer == pointer)
    }

    @Test func structuralLimitsAreEnforcedAtCompileTime() {
        var deep: JSONValue = true
        for _ in 0..<65 { deep = ["not": deep] }
        let depth = #expect(throws: CodexSchemaError.self) { try JSONSchemaValidator(schema: deep) }
        #expect(depth?.code == .schemaDepthLimitExceeded)
        var properties = JSONObject()
        for index in 0..<10_001 { properties["p\(index)"] = true }
        let nodes = #expect(throws: CodexSchemaError.self) { try JSONSchemaValidator(schema: ["properties": .object(properties)]) }
        #expect(nodes?.code == .schemaNodeLimitExceeded)
    }

    @Test func falseSchemasAndConstantsReportPrecisely() throws {
        #expect(try errors(["properties": ["a": false]], #"{"a": 1}"#) == ["/a|/properties/a|false"])
        #expect(try errors(["const": ["x": [1, 2]]], #"{"x": [1.0, 2e0]}"#).isEmpty)
        #expect(try errors(["const": ["x": [1, 2]]], #"{"x": [2, 1]}"#) == ["|/const|const"])
        #expect(try errors(["enum": [1, "a", nil, ["k": true]]], #"{"k": true}"#).isEmpty)
        #expect(try errors(["enum": [false]], "0") == ["|/enum|enum"])
        #expect(try errors(["uniqueItems": true], #"[{"a":1,"b":2},{"b":2,"a":1.0}]"#) == ["|/uniqueItems|uniqueItems"])
        let many = "[" + (0..<100).map { #"{"i":\#($0)}"# }.joined(separator: ",") + #",{"i":42.0}]"#
        #expect(try errors(["uniqueItems": true], many) == ["|/uniqueItems|uniqueItems"])
    }

    @Test func builderSchemasRenderTheDocumentedShapes() throws {
        #expect(JSONSchema.string().jsonValue == ["type": "string"])
        #expect(JSONSchema.string(enum: ["a"]).jsonValue == ["type": "string", "enum": ["a"]])
        #expect(JSONSchema.nullable(.integer).jsonValue == ["anyOf": [["type": "integer"], ["type": "null"]]])
        #expect(JSONSchema.array(items: .boolean).jsonValue == ["type": "array", "items": ["type": "boolean"]])
        let object = JSONSchema.object(properties: ["b": .number, "a": .string()])
        #expect(object.jsonValue == [
            "type": "object", "properties": ["b": ["type": "number"], "a": ["type": "string"]],
            "required": ["b", "a"], "additionalProperties": false,
        ])
        #expect(object.jsonValue["properties"]?.objectValue?.keys == ["b", "a"])
        #expect(JSONSchema.raw(["minimum": 3]).jsonValue == ["minimum": 3])
        _ = try JSONSchemaValidator(schema: Self.shipping)
    }
}

extension JSONValue {
    /// A copy with `$defs` members added (test helper).
    fileprivate func replacing(defs: JSONObject) -> JSONValue {
        guard case .object(var object) = self, case .object(var existing)? = object["$defs"] else { return self }
        for member in defs { existing[member.key] = member.value }
        object["$defs"] = .object(existing)
        return .object(object)
    }
}

@Suite struct StringEqualityTests {
    /// "ä" precomposed (U+00E4) and decomposed (a + U+0308) look alike but are different JSON strings.
    static let precomposed = "\u{E4}"
    static let decomposed = "a\u{308}"

    @Test func jsonValuesCompareStringsByCodePoints() {
        #expect(JSONValue.string(Self.precomposed) != .string(Self.decomposed))
        #expect(Set<JSONValue>([.string(Self.precomposed), .string(Self.decomposed)]).count == 2)
        let pairs: [(String, JSONValue)] = [(Self.precomposed, 1), (Self.decomposed, 2)]
        let object: JSONValue = .object(JSONObject(pairs))
        #expect(object.objectValue?.count == 2)
        #expect(object[Self.precomposed] == 1)
        #expect(object[Self.decomposed] == 2)
    }

    @Test func theValidatorComparesStringsByCodePoints() throws {
        let text = #""\u00e4""#
        let other = #""a\u0308""#
        for schema: JSONValue in [["const": .string(Self.precomposed)], ["enum": [.string(Self.precomposed), 1]], ["enum": [.string(Self.precomposed)]]] {
            let validator = try JSONSchemaValidator(schema: schema)
            #expect(try validator.isValid(jsonBytes: Array(text.utf8)))
            #expect(try !validator.isValid(jsonBytes: Array(other.utf8)))
            #expect(try !validator.isValid(.string(Self.decomposed)))
        }
        let unique = try JSONSchemaValidator(schema: ["uniqueItems": true])
        #expect(try unique.isValid(jsonBytes: Array("[\(text), \(other)]".utf8)))
        let required = try JSONSchemaValidator(schema: ["required": .array([.string(Self.precomposed)])])
        #expect(try !required.isValid(jsonBytes: Array(#"{"a\u0308": 1}"#.utf8)))
        #expect(try JSONValue(parsing: #"{"\u00e4": 1, "a\u0308": 2}"#).objectValue?.count == 2)
    }
}
