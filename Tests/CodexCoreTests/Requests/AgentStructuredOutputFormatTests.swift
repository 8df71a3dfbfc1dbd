import CodexCore
import CodexSchema
import CodexTestSupport
import Foundation
import Testing

@Suite struct AgentStructuredOutputFormatTests {
    @Test func specFormatCompilesAndEnforcesItsSchema() throws {
        let format = ShippingReplyDraft.responseFormat
        #expect(format.strict)
        let validator = try format.validator()
        #expect(try validator.isValid(jsonBytes: Array(#"{"subject":"s","reply":"r","urgency":"low"}"#.utf8)))
        #expect(try !validator.isValid(jsonBytes: Array(#"{"subject":"s","reply":"r","urgency":"urgent"}"#.utf8)))
        #expect(try !validator.isValid(jsonBytes: Array(#"{"subject":"s","reply":"r","urgency":"low","x":1}"#.utf8)))
        #expect(format.schema["properties"]?.objectValue?.keys == ["subject", "reply", "urgency"])
    }

    @Test func unusableFormatsAreTypedErrors() {
        let badName = AgentStructuredOutputFormat(name: "has space", rawSchema: ["type": "object"])
        #expect((#expect(throws: AgentRuntimeError.self) { try badName.validator() })?.code == .invalidResponseFormat)
        let longName = AgentStructuredOutputFormat(name: String(repeating: "a", count: 65), rawSchema: true)
        #expect((#expect(throws: AgentRuntimeError.self) { try longName.validator() })?.code == .invalidResponseFormat)
        let pattern = AgentStructuredOutputFormat(name: "p", rawSchema: ["type": "string", "pattern": "^a"])
        let error = #expect(throws: AgentRuntimeError.self) { try pattern.validator() }
        #expect(error?.code == .unsupportedSchemaKeyword)
        #expect((error?.underlying as? CodexSchemaError)?.schemaPointer == "/pattern")
    }

    @Test func formatsAndSnapshotsRoundTrip() throws {
        let format = ShippingReplyDraft.responseFormat
        #expect(try JSONDecoder().decode(AgentStructuredOutputFormat.self, from: JSONEncoder().encode(format)) == format)
        let metadata = AgentStructuredOutputMetadata(formatName: "f", payload: ["b": 2, "a": 1.5])
        #expect(metadata.payloadDigest == SHA256.hexDigest(of: Array(#"{"a":1.5,"b":2}"#.utf8)))
        #expect(try JSONDecoder().decode(AgentStructuredOutputMetadata.self, from: JSONEncoder().encode(metadata)) == metadata)
        #expect(AgentStructuredStreamingOptions().required)
    }

    /// The digest hashed from a parsed document's tape is the digest of the value's canonical bytes, for a
    /// payload whose canonical bytes span several 64 KiB chunks.
    @Test func theDigestFromAParsedDocumentIsTheValuesDigest() throws {
        var text = #"{"z":"\u00e9\n","items":["#
        for index in 0..<12_000 { text += (index > 0 ? "," : "") + #"{"name":"item \#(index)","id":\#(index),"price":\#(index).25}"# }
        text += "]}"
        let document = try JSONDocument(parsing: Array(text.utf8))
        let value = try JSONValue(parsing: text)
        let fromDocument = AgentStructuredOutputMetadata(formatName: "f", payload: value, parsedAs: document)
        let fromValue = AgentStructuredOutputMetadata(formatName: "f", payload: value)
        #expect(value.canonicalBytes().count > 4 * 64 * 1024)
        #expect(fromDocument == fromValue)
        #expect(fromDocument.payloadDigest == SHA256.hexDigest(of: value.canonicalBytes()))
    }
}
