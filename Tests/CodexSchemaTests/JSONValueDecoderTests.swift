import CodexSchema
import Foundation
import Testing

/// Differential tests: every case decodes through `JSONValueDecoder` exactly as through Foundation's
/// `JSONDecoder` (same value, or both fail), from a ``JSONValue`` and from a ``JSONDocument`` (the parse
/// tape read in place), and the two `JSONValueDecoder` paths give the same value or the same error.
@Suite struct JSONValueDecoderTests {
    struct Item: Codable, Equatable {
        let id: Int
        let name: String
        let tags: [String]
        let price: Double?
        let ratio: Float?
    }

    enum Kind: String, Codable, Equatable { case low, high }

    enum Shape: Codable, Equatable {
        case circle(radius: Double)
        case square(side: Int)
        case none
    }

    struct Everything: Codable, Equatable {
        let kind: Kind
        let shapes: [Shape]
        let items: [Item]
        let byName: [String: Int]
        let byNumber: [Int: String]
        let when: Date
        let blob: Data
        let link: URL
        let amount: Decimal
        let small: Int8
        let big: UInt64
        let signed: Int64
        let flag: Bool
        let nested: [[Int?]]
        let missing: String?
    }

    /// A hand-written decoder using nested containers and a super decoder.
    struct Custom: Decodable, Equatable {
        let first: String
        let inner: Int
        let rest: [String]
        let base: String

        enum Keys: String, CodingKey { case first, box, rest, base }
        enum BoxKeys: String, CodingKey { case inner }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            first = try container.decode(String.self, forKey: .first)
            inner = try container.nestedContainer(keyedBy: BoxKeys.self, forKey: .box).decode(Int.self, forKey: .inner)
            var list = try container.nestedUnkeyedContainer(forKey: .rest)
            var rest: [String] = []
            while !list.isAtEnd {
                if try list.decodeNil() { rest.append("nil") } else { rest.append(try list.decode(String.self)) }
            }
            self.rest = rest
            base = try String(from: container.superDecoder(forKey: .base))
        }
    }

    private func same<T: Decodable & Equatable>(_ type: T.Type, _ json: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let foundation = Result { try JSONDecoder().decode(T.self, from: Data(json.utf8)) }
        let ours = Result { try JSONValueDecoder().decode(T.self, from: try JSONValue(parsing: json)) }
        let tape = Result { try JSONValueDecoder().decode(T.self, from: try JSONDocument(parsing: Array(json.utf8))) }
        switch (ours, tape) {
        case (.success(let fromValue), .success(let fromTape)):
            #expect(fromTape == fromValue, "\(json)", sourceLocation: sourceLocation)
        case (.failure(let valueError), .failure(let tapeError)):
            #expect(String(describing: tapeError) == String(describing: valueError), "\(json)", sourceLocation: sourceLocation)
        default:
            Issue.record("decoding \(json) from the value and from the document disagree: \(ours) / \(tape)", sourceLocation: sourceLocation)
        }
        switch (foundation, ours) {
        case (.success(let expected), .success(let actual)):
            #expect(actual == expected, "\(json)", sourceLocation: sourceLocation)
        case (.failure, .failure):
            break
        case (.success, .failure(let error)):
            Issue.record("JSONDecoder decoded \(json) but JSONValueDecoder failed: \(error)", sourceLocation: sourceLocation)
        case (.failure(let error), .success):
            Issue.record("JSONValueDecoder decoded \(json) but JSONDecoder failed: \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func aRichValueDecodesAsWithJSONDecoder() throws {
        let json = """
        {"kind":"high","shapes":[{"circle":{"radius":1.5}},{"square":{"side":3}},{"none":{}}],
         "items":[{"id":1,"name":"a","tags":["x","y"],"price":2.25,"ratio":0.5},{"id":2,"name":"b","tags":[],"price":null}],
         "byName":{"a":1,"b":2},"byNumber":{"1":"one","20":"twenty"},"when":123456.5,"blob":"aGVsbG8=",
         "link":"https://example.com/a?b=c","amount":12.345,"small":-128,"big":18446744073709551615,
         "signed":-9223372036854775808,"flag":true,"nested":[[1,null],[]]}
        """
        try same(Everything.self, json)
        let decoded = try JSONValueDecoder().decode(Everything.self, from: try JSONValue(parsing: json))
        #expect(decoded.big == UInt64.max)
        #expect(decoded.blob == Data("hello".utf8))
        #expect(decoded.byNumber == [1: "one", 20: "twenty"])
    }

    @Test func customDecodersRunAsWritten() throws {
        try same(Custom.self, #"{"first":"f","box":{"inner":7},"rest":["a",null,"b"],"base":"super"}"#)
        try same(Custom.self, #"{"first":"f","box":{},"rest":[],"base":"s"}"#)
    }

    @Test(arguments: [
        "1", "1.0", "1e2", "-0", "1.5", "128", "-129", "9007199254740993", "1e30", "\"1\"", "null", "true",
    ])
    func integersConvertExactlyOrFailLikeJSONDecoder(_ number: String) throws {
        try same([Int8].self, "[\(number)]")
        try same([Int].self, "[\(number)]")
        try same([UInt64].self, "[\(number)]")
        try same([Int64].self, "[\(number)]")
    }

    @Test(arguments: ["1", "0.1", "1e38", "1e39", "-1e39", "3.4028235e38", "1e-50", "1e-40", "1e-46", "1.2e-38", "0", "-0.0", "1e400", "-1e400", "1e-400"])
    func floatingPointTakesTheNearestValueLikeJSONDecoder(_ number: String) throws {
        try same([Double].self, "[\(number)]")
        try same([Float].self, "[\(number)]")
    }

    @Test func integersBeyondDoubleKeepEveryDigit() throws {
        let value = try JSONValue(parsing: "[9007199254740993, -9007199254740993]")
        #expect(try JSONValueDecoder().decode([Int64].self, from: value) == [9_007_199_254_740_993, -9_007_199_254_740_993])
    }

    @Test(arguments: [
        #"{"id":1,"name":"a","tags":["x"]}"#,
        #"{"id":1,"name":"a"}"#,
        #"{"id":"1","name":"a","tags":[]}"#,
        #"{"id":1,"name":null,"tags":[]}"#,
        #"{"id":1,"name":"a","tags":[1]}"#,
        #"[1,2]"#,
        #"{"id":1,"name":"a","tags":[],"price":"2"}"#,
        #"{"id":1,"name":"a","tags":[],"ratio":1e300}"#,
    ])
    func missingKeysNullsAndWrongTypesFailLikeJSONDecoder(_ json: String) throws {
        try same(Item.self, json)
    }

    @Test func foundationSpecialCasesMatch() throws {
        try same([Data].self, #"["not base64!"]"#)
        try same([URL].self, #"[""]"#)
        try same([Decimal].self, #"["12"]"#)
        try same([Date].self, #"["2020-01-01"]"#)
        try same([Kind].self, #"["medium"]"#)
    }
}
