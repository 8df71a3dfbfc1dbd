import CodexSchema
import Testing

@Suite struct JSONCanonicalTests {
    @Test func sortsKeysAndDropsWhitespace() throws {
        let value = try JSONValue(parsing: #" { "b" : [ 1.0 , 2 ] , "a" : { "d" : null , "c" : true } , "é": "x", "B": 0 } "#)
        #expect(value.canonicalString() == #"{"B":0,"a":{"c":true,"d":null},"b":[1,2],"é":"x"}"#)
    }

    @Test func escapesOnlyWhatItMust() {
        let value = JSONValue.string("a\"b\\c/d\u{08}\u{0C}\n\r\t\u{01}\u{1F}é😀\u{7F}")
        #expect(value.canonicalString() == #""a\"b\\c/d\b\f\n\r\t\u0001\u001fé😀"# + "\u{7F}\"")
    }

    @Test func equalValuesSerializeToEqualBytes() throws {
        let first = try JSONValue(parsing: #"{"b":1,"a":[1.0,{"y":2,"x":1e0}]}"#)
        let second = try JSONValue(parsing: #"{"a":[1,{"x":1,"y":2.00}],"b":10e-1}"#)
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(first.canonicalBytes() == second.canonicalBytes())
    }

    @Test func objectEqualityIgnoresKeyOrder() {
        let first: JSONValue = ["a": 1, "b": 2]
        let second: JSONValue = ["b": 2, "a": 1]
        #expect(first == second)
        #expect(first != ["a": 1, "b": 3])
        #expect(first != ["a": 1])
    }

    @Test(arguments: JSONFuzzTests.documents + ["jsonschema/rejected.json"])
    func parseSerializeParseIsTheIdentity(path: String) throws {
        let bytes = try Fixtures.bytes(path)
        let options = JSONParsingOptions(maximumDepth: 256)
        let value = try JSONValue(parsing: bytes, options: options)
        let canonical = value.canonicalBytes()
        let reparsed = try JSONValue(parsing: canonical, options: options)
        #expect(reparsed == value)
        #expect(reparsed.canonicalBytes() == canonical)
        #expect(JSONDocument(value).value == value)
        #expect(try JSONDocument(parsing: bytes, options: options).value == value)
    }

    @Test func largeObjectsUseTheirIndexAndStayOrderless() throws {
        var object = JSONObject()
        for index in (0..<40).reversed() { object["k\(index)"] = .number(JSONNumber(index)) }
        #expect(object.count == 40)
        #expect(object["k7"] == 7)
        #expect(object.keys.first == "k39")
        object["k7"] = nil
        #expect(object["k7"] == nil)
        #expect(object["k8"] == 8)
        #expect(object.count == 39)
        let sorted = JSONObject(object.dictionary)
        #expect(sorted == object)
        #expect(JSONValue.object(sorted).canonicalBytes() == JSONValue.object(object).canonicalBytes())
    }
}
