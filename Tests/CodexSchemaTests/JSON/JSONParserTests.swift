import CodexSchema
import Testing

@Suite struct JSONParserTests {
    struct Failure: CustomTestStringConvertible, Sendable {
        let input: [UInt8]
        let code: CodexSchemaError.Code
        let offset: Int
        var testDescription: String { "\(String(decoding: input, as: UTF8.self).debugDescription) → \(code)@\(offset)" }

        init(_ text: String, _ code: CodexSchemaError.Code, _ offset: Int) {
            self.input = Array(text.utf8)
            self.code = code
            self.offset = offset
        }

        init(bytes: [UInt8], _ code: CodexSchemaError.Code, _ offset: Int) {
            self.input = bytes
            self.code = code
            self.offset = offset
        }
    }

    static let failures: [Failure] = [
        Failure("[1,2,]", .jsonTrailingComma, 4),
        Failure(#"{"a":1,}"#, .jsonTrailingComma, 6),
        Failure("[1 , ]", .jsonTrailingComma, 3),
        Failure("01", .jsonLeadingZero, 0),
        Failure("[-012]", .jsonLeadingZero, 2),
        Failure("1.", .jsonUnexpectedEnd, 2),
        Failure("[1.]", .jsonInvalidNumber, 3),
        Failure("-", .jsonUnexpectedEnd, 1),
        Failure("-a", .jsonInvalidNumber, 1),
        Failure("1e", .jsonUnexpectedEnd, 2),
        Failure("[1e+]", .jsonInvalidNumber, 4),
        Failure(".5", .jsonUnexpectedCharacter, 0),
        Failure("1e1000000001", .jsonNumberOutOfRange, 2),
        Failure("\"a\u{01}b\"", .jsonControlCharacter, 2),
        Failure("\"tab\there\"", .jsonControlCharacter, 4),
        Failure(#""\x""#, .jsonInvalidEscape, 1),
        Failure(#""\u12G4""#, .jsonInvalidEscape, 5),
        Failure(#""\uD800""#, .jsonLoneSurrogate, 1),
        Failure(#""\uDC00""#, .jsonLoneSurrogate, 1),
        Failure(#""ab\uD83D\u0041""#, .jsonLoneSurrogate, 3),
        Failure(bytes: [0x22, 0xC3, 0x28, 0x22], .jsonInvalidUTF8, 1),
        Failure(bytes: [0x22, 0xC0, 0xAF, 0x22], .jsonInvalidUTF8, 1),
        Failure(bytes: [0x22, 0x61, 0xED, 0xA0, 0x80, 0x22], .jsonInvalidUTF8, 2),
        Failure(bytes: [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], .jsonInvalidUTF8, 1),
        Failure(bytes: [0x22, 0xE2, 0x82], .jsonInvalidUTF8, 1),
        Failure(bytes: [0x22, 0xFF, 0x22], .jsonInvalidUTF8, 1),
        Failure(#"{"a":1,"a":2}"#, .jsonDuplicateKey, 7),
        Failure(#"{"a":1,"b":2,"a":3}"#, .jsonDuplicateKey, 13),
        Failure(#"{"k\u0061":1,"ka":2}"#, .jsonDuplicateKey, 13),
        Failure(#"{"ka":1,"k\u0061":2}"#, .jsonDuplicateKey, 8),
        // Keys of other lengths between the pair, containers as values, and keys past 63 bytes (which
        // the one-bit-per-length shortcut leaves to the full check).
        Failure(#"{"a":1,"bb":2,"ccc":3,"bb":4}"#, .jsonDuplicateKey, 22),
        Failure(#"{"aa":[1,2],"b":{},"aa":3}"#, .jsonDuplicateKey, 19),
        Failure(#"{"a":{"x":1,"yy":[],"x":2}}"#, .jsonDuplicateKey, 20),
        Failure("{\"" + String(repeating: "k", count: 70) + "\":1,\"" + String(repeating: "k", count: 70) + "\":2}", .jsonDuplicateKey, 76),
        Failure("{\"" + String(repeating: "k", count: 70) + "\":1,\"" + String(repeating: "k", count: 69) + "\":2,\"" + String(repeating: "k", count: 69) + "\":3}", .jsonDuplicateKey, 150),
        Failure("1 2", .jsonTrailingData, 2),
        Failure("{} x", .jsonTrailingData, 3),
        Failure("", .jsonUnexpectedEnd, 0),
        Failure("   ", .jsonUnexpectedEnd, 3),
        Failure("[1,", .jsonUnexpectedEnd, 3),
        Failure(#""abc"#, .jsonUnexpectedEnd, 4),
        Failure(#"{"a" 1}"#, .jsonUnexpectedCharacter, 5),
        Failure("{1:2}", .jsonUnexpectedCharacter, 1),
        Failure("[1 2]", .jsonUnexpectedCharacter, 3),
        Failure("tru", .jsonUnexpectedEnd, 3),
        Failure("trux", .jsonUnexpectedCharacter, 3),
        Failure("nul", .jsonUnexpectedEnd, 3),
        Failure(bytes: [0xEF, 0xBB, 0xBF, 0x31], .jsonUnexpectedCharacter, 0),
        Failure("[\"a\"]]", .jsonTrailingData, 5),
    ]

    @Test(arguments: failures)
    func rejectsWithCodeAndByteOffset(_ failure: Failure) {
        do {
            let value = try JSONValue(parsing: failure.input)
            Issue.record("parsed \(value) but expected \(failure.code)")
        } catch {
            #expect(error.code == failure.code)
            #expect(error.byteOffset == failure.offset)
        }
    }

    @Test func documentAndValueParsersAgreeOnFailures() {
        for failure in Self.failures {
            #expect(throws: CodexSchemaError.self) { try JSONDocument(parsing: failure.input) }
        }
    }

    @Test func depthLimitDefaultsTo64() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        _ = try JSONValue(parsing: ok)
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        let error = #expect(throws: CodexSchemaError.self) { try JSONValue(parsing: deep) }
        #expect(error?.code == .jsonDepthLimitExceeded)
        #expect(error?.byteOffset == 64)
    }

    @Test func aHundredThousandOpenBracketsIsATypedErrorNotACrash() {
        let input = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        for depth in [64, 1_024, 1_000_000] {
            let error = #expect(throws: CodexSchemaError.self) {
                try JSONValue(parsing: input, options: .init(maximumDepth: depth))
            }
            #expect(error?.code == .jsonDepthLimitExceeded)
            #expect(error?.byteOffset == min(depth, JSONParsingOptions.depthCeiling))
        }
        let objects = [UInt8](String(repeating: #"{"a":"#, count: 100_000).utf8)
        let error = #expect(throws: CodexSchemaError.self) { try JSONValue(parsing: objects) }
        #expect(error?.code == .jsonDepthLimitExceeded)
    }

    @Test func sizeLimitIsEnforcedBeforeParsing() {
        let error = #expect(throws: CodexSchemaError.self) {
            try JSONValue(parsing: "[1,2,3,4,5]", options: .init(maximumBytes: 10))
        }
        #expect(error?.code == .jsonSizeLimitExceeded)
        #expect(error?.byteOffset == 10)
    }

    @Test func decodesEscapesAndUnicode() throws {
        let value = try JSONValue(parsing: #""\u00e9\uD83D\uDE00\n\t\/\\\"\b\f\r é😀""#)
        #expect(value == .string("é😀\n\t/\\\"\u{08}\u{0C}\r é😀"))
        #expect(try JSONValue(parsing: #""\u0000""#) == .string("\u{0}"))
    }

    @Test func parsesStructureAndKeepsMemberOrder() throws {
        let value = try JSONValue(parsing: " {\"z\": [1, 2.5, true, false, null], \"a\": {\"y\": \"x\"}, \"m\": -0} ")
        guard case .object(let object) = value else {
            Issue.record("not an object")
            return
        }
        #expect(object.keys == ["z", "a", "m"])
        #expect(value["z"] == [1, 2.5, true, false, nil])
        #expect(value["a"]?["y"] == "x")
        #expect(value["m"] == 0)
    }

    @Test func keepsNumbersExactly() throws {
        let text = "[18446744073709551616, -98249283749234923498293171823948729348710298301928331, 0.123456789012345678901234567890123456, 1.0, 1e2, 12.50]"
        let value = try JSONValue(parsing: text)
        #expect(value.canonicalString() == "[18446744073709551616,-98249283749234923498293171823948729348710298301928331,0.123456789012345678901234567890123456,1,100,12.5]")
    }

    @Test func stringWithManyEscapesAndLongRunsRoundTrips() throws {
        let long = String(repeating: "abcdefgh", count: 1_000) + "\"" + String(repeating: "é", count: 100)
        let value = JSONValue.string(long)
        #expect(try JSONValue(parsing: value.canonicalBytes()) == value)
    }
}
