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
        #expect(try JSONDocument(parsing: bytes, options: options).canonicalBytes() == canonical)
        #expect(JSONDocument(value).canonicalBytes() == canonical)
    }

    /// The writer over parse tapes gives the value writer's bytes: escapes decoded into the arena and
    /// written back minimally, keys put in byte order per object (nested objects inside unsorted ones),
    /// every number form, and the chunk boundaries of the 64 KiB sink.
    @Test(arguments: [
        (#" { "b" : [ 1.0 , 2 ] , "a" : { "d" : null , "c" : true } , "é": "x", "B": 0 } "#, #"{"B":0,"a":{"c":true,"d":null},"b":[1,2],"é":"x"}"#),
        (#"{"k\u0065y":"line\none \u00e9\ud83d\ude00 \u0001 \"q\" \\ \/","a":[]}"#, #"{"a":[],"key":"line\none é😀 \u0001 \"q\" \\ /"}"#),
        (#"{"z":{"y":{"x":1,"w":2},"v":[{"u":1,"t":2}]},"s":{}}"#, #"{"s":{},"z":{"v":[{"t":2,"u":1}],"y":{"w":2,"x":1}}}"#),
        (#"[0,-0,-1,9223372036854775807,-9223372036854775808,9223372036854775808,1.5,-0.25,1e2,1E-7,0.000001,123456789012345678901234567890e-5,2.5e70,-1e-400]"#,
         #"[0,0,-1,9223372036854775807,-9223372036854775808,9223372036854775808,1.5,-0.25,100,1e-7,0.000001,1234567890123456789012345.6789,2.5e+70,-1e-400]"#),
        (#""top""#, #""top""#),
        (#"{"q":1,"p":2,"o":3,"n":4,"m":5,"l":6,"k":7,"j":8,"i":9,"h":10,"g":11,"f":12,"e":13,"d":14,"c":15,"b":16,"a":17,"ab":18,"":19}"#,
         #"{"":19,"a":17,"ab":18,"b":16,"c":15,"d":14,"e":13,"f":12,"g":11,"h":10,"i":9,"j":8,"k":7,"l":6,"m":5,"n":4,"o":3,"p":2,"q":1}"#),
    ])
    func theDocumentWriterMatchesTheValueWriter(input: String, expected: String) throws {
        let document = try JSONDocument(parsing: Array(input.utf8))
        let value = try JSONValue(parsing: input)
        #expect(String(decoding: document.canonicalBytes(), as: UTF8.self) == expected)
        #expect(value.canonicalString() == expected)
        #expect(JSONDocument(value).canonicalBytes() == Array(expected.utf8))
    }

    @Test func theDocumentWriterCrossesChunkBoundariesExactly() throws {
        // A 40 KiB string goes to the consumer on its own; escapes straddle the 64 KiB boundaries.
        let long = String(repeating: "a", count: 40 * 1024)
        let escaped = String(repeating: #"x\"\\\n"#, count: 30_000)
        var text = #"{"b":""# + long + #"","a":[""# + escaped + #"""#
        for index in 0..<5_000 { text += #","n\#(index)""# }
        text += #"],"c":-12345678901234}"#
        let document = try JSONDocument(parsing: Array(text.utf8))
        let expected = try JSONValue(parsing: text).canonicalBytes()
        #expect(expected.count > 3 * 64 * 1024)
        #expect(document.canonicalBytes() == expected)
        var chunks: [Int] = []
        var joined: [UInt8] = []
        document.withCanonicalChunks { chunk in
            chunks.append(chunk.count)
            joined.append(contentsOf: chunk)
        }
        #expect(joined == expected)
        #expect(chunks.allSatisfy { $0 <= 64 * 1024 })
        #expect(chunks.contains(40 * 1024 + 2) || chunks.contains(40 * 1024))
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

/// The word-at-a-time search for the next byte to escape, against a byte-by-byte reference: every byte
/// value at every position of a run longer than two words, found from every start.
@Suite struct CanonicalJSONEscapeSearchTests {
    private func reference(_ bytes: [UInt8], from start: Int) -> Int {
        bytes[start...].firstIndex { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C } ?? bytes.count
    }

    @Test func everyByteAtEveryPositionIsFoundWhereTheReferenceFindsIt() {
        var checked = 0
        for filler in [UInt8(ascii: "a"), 0x7F, 0xC3, 0xFF, 0x20, 0x21, 0x5B, 0x5D] {
            for byte in UInt8.min...UInt8.max {
                for position in 0..<19 {
                    var bytes = [UInt8](repeating: filler, count: 19)
                    bytes[position] = byte
                    for start in [0, 1, 7, 8, 9, position, min(position + 1, 19)] {
                        let found = bytes.withUnsafeBufferPointer { CanonicalJSONSink.firstEscape(in: $0, from: start) }
                        #expect(found == reference(bytes, from: start), "byte \(byte) at \(position) in \(filler)s from \(start)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == 8 * 256 * 19 * 7)
    }

    @Test func aStringWithEscapesInEveryWordKeepsItsOtherBytes() {
        let text = String(repeating: "abc\"def\\ghi\u{01}jklmnopé", count: 9)
        var expected = ""
        for _ in 0..<9 { expected += #"abc\"def\\ghi\u0001jklmnopé"# }
        #expect(JSONValue.string(text).canonicalString() == "\"" + expected + "\"")
    }
}
