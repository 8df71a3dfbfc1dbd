import CodexSchema
import Testing

@Suite struct JSONValueEncoderTests {
    struct Inner: Encodable {
        let z: Int
        let a: [Double]
    }

    struct Outer: Encodable {
        let title: String
        let inner: Inner
        let missing: String?
        let flag: Bool
        let big: UInt64
        let small: Int8
        let ratio: Float
        let list: [Inner?]
        let raw: JSONValue
    }

    @Test func keepsEncodingOrderAndExactNumbers() throws {
        let value = try JSONValueEncoder().encode(Outer(
            title: "t/x", inner: Inner(z: 1, a: [0.1, 2.5e-8]), missing: nil, flag: true, big: .max, small: -3, ratio: 0.1,
            list: [nil, Inner(z: 2, a: [])], raw: ["k": [1, 2]]
        ))
        #expect(value.compactString() == #"{"title":"t/x","inner":{"z":1,"a":[0.1,2.5e-8]},"flag":true,"big":18446744073709551615,"small":-3,"ratio":0.1,"list":[null,{"z":2,"a":[]}],"raw":{"k":[1,2]}}"#)
        #expect(value.canonicalString() == #"{"big":18446744073709551615,"flag":true,"inner":{"a":[0.1,2.5e-8],"z":1},"list":[null,{"a":[],"z":2}],"ratio":0.1,"raw":{"k":[1,2]},"small":-3,"title":"t/x"}"#)
    }

    @Test func encodesTopLevelScalarsAndCollections() throws {
        #expect(try JSONValueEncoder().encode(42) == 42)
        #expect(try JSONValueEncoder().encode("s") == "s")
        #expect(try JSONValueEncoder().encode([1, 2]) == [1, 2])
        #expect(try JSONValueEncoder().encode(["b": 1]) == ["b": 1])
        #expect(try JSONValueEncoder().encode(Optional<Int>.none) == nil)
    }

    @Test func nonFiniteNumbersAreEncodingErrors() {
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode([Double.nan]) }
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode(["x": Double.infinity]) }
    }

    struct Custom: Encodable {
        enum Keys: String, CodingKey { case a, b }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(1, forKey: .a)
            var nested = container.nestedUnkeyedContainer(forKey: .b)
            try nested.encode("x")
            var deeper = nested.nestedContainer(keyedBy: Keys.self)
            try deeper.encode(true, forKey: .b)
            try container.encode(2, forKey: .a) // a repeated key keeps its first position, last value
        }
    }

    @Test func nestedContainersAndRepeatedKeys() throws {
        #expect(try JSONValueEncoder().encode(Custom()).compactString() == #"{"a":2,"b":["x",{"b":true}]}"#)
    }
}
