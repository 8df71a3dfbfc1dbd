import CodexSchema
import Foundation
import Testing

/// Decoding from a ``JSONDocument`` reads the parse tape in place; these cases pin the parts of that path
/// the value path does not have (key lookup by bytes, the hash index of large objects, strings in the
/// arena, absent super values, lazily built coding paths) against Foundation's `JSONDecoder` and the
/// decoder over a ``JSONValue``.
@Suite struct JSONTapeDecoderTests {
    struct Pair: Codable, Equatable {
        let key: String
        let count: Int
    }

    struct Catalog: Codable, Equatable {
        let title: String
        let items: [Pair]
    }

    /// Reads a super decoder whose key may be absent (then the value is `null`).
    struct WithSuper: Decodable, Equatable {
        let base: String?
        let plain: String?
        enum Keys: String, CodingKey { case base, other }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            base = try String?(from: container.superDecoder(forKey: .other))
            plain = try String?(from: container.superDecoder())
        }
    }

    /// Decodes through Foundation and through CodexSchema from a value, a parsed document and a document
    /// built from a value; the results must agree (value or failure) and the CodexSchema paths must report
    /// the same error.
    @discardableResult
    private func decodeAll<T: Decodable & Equatable>(
        _ type: T.Type, _ json: String, checksFoundation: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) throws -> T? {
        let foundation = try? JSONDecoder().decode(T.self, from: Data(json.utf8))
        let value = Result { try JSONValueDecoder().decode(T.self, from: try JSONValue(parsing: json)) }
        let tape = Result { try JSONValueDecoder().decode(T.self, from: try JSONDocument(parsing: Array(json.utf8))) }
        let fromBuilt = Result { try JSONValueDecoder().decode(T.self, from: JSONDocument(try JSONValue(parsing: json))) }
        for other in [tape, fromBuilt] {
            switch (value, other) {
            case (.success(let expected), .success(let actual)): #expect(actual == expected, sourceLocation: sourceLocation)
            case (.failure(let expected), .failure(let actual)): #expect(String(describing: actual) == String(describing: expected), sourceLocation: sourceLocation)
            default: Issue.record("value path \(value), tape path \(other)", sourceLocation: sourceLocation)
            }
        }
        if checksFoundation {
            let fromTape = try? tape.get()
            #expect(fromTape == foundation, sourceLocation: sourceLocation)
        }
        return try? tape.get()
    }

    @Test func anArrayOfObjectsDecodesExactly() throws {
        let decoded = try decodeAll(Catalog.self, #"{"items":[{"count":1,"key":"a"},{"key":"b","count":-2}],"title":"T"}"#)
        #expect(decoded == Catalog(title: "T", items: [Pair(key: "a", count: 1), Pair(key: "b", count: -2)]))
    }

    @Test func escapedKeysAndStringsAreMatchedByTheirDecodedBytes() throws {
        let decoded = try decodeAll(Pair.self, #"{"k\u0065y":"line\none \u00e9\ud83d\ude00","count":3}"#)
        #expect(decoded == Pair(key: "line\none é😀", count: 3))
    }

    @Test func largeObjectsAreFoundThroughTheirIndex() throws {
        let members = (0..<40).map { "\"key\($0)\":\($0 * 3)" }.joined(separator: ",")
        let decoded = try decodeAll([String: Int].self, "{\(members)}")
        #expect(decoded?.count == 40)
        #expect(decoded?["key39"] == 117)
        let wide = (0..<20).map { "\"f\($0)\":\($0)" }.joined(separator: ",")
        #expect(try decodeAll(Pair.self, "{\(wide),\"key\":\"k\",\"count\":7}") == Pair(key: "k", count: 7))
    }

    @Test func canonicallyEquivalentKeysStayDistinct() throws {
        // "é" precomposed and decomposed: equal as Swift strings, different as JSON keys. Both CodexSchema
        // paths match keys by code points, as JSONValue does (Foundation's decoder merges the two).
        let padding = (0..<14).map { "\"p\($0)\":0" }.joined(separator: ",")
        let json = "{\(padding),\"e\\u0301\":1,\"\\u00e9\":2}"
        struct Accent: Decodable, Equatable {
            let value: Int
            enum Keys: String, CodingKey { case precomposed = "\u{E9}" }
            init(from decoder: any Decoder) throws {
                value = try decoder.container(keyedBy: Keys.self).decode(Int.self, forKey: .precomposed)
            }
        }
        #expect(try decodeAll(Accent.self, json, checksFoundation: false)?.value == 2)
        let small = try JSONValueDecoder().decode(Accent.self, from: try JSONDocument(parsing: Array(#"{"e\u0301":1,"\u00e9":2}"#.utf8)))
        #expect(small.value == 2)
    }

    @Test func anAbsentSuperValueReadsAsNull() throws {
        let absent = try decodeAll(WithSuper.self, #"{"base":"b"}"#)
        #expect(absent?.base == .some(nil))
        #expect(absent?.plain == .some(nil))
        let present = try decodeAll(WithSuper.self, #"{"other":"o","super":"s"}"#)
        #expect(present?.base == "o")
        #expect(present?.plain == "s")
    }

    @Test func errorsCarryTheFullCodingPath() throws {
        let json = #"{"title":"T","items":[{"key":"a","count":1},{"key":"b","count":"2"}]}"#
        do {
            _ = try JSONValueDecoder().decode(Catalog.self, from: try JSONDocument(parsing: Array(json.utf8)))
            Issue.record("a string count decoded")
        } catch let DecodingError.typeMismatch(type, context) {
            #expect(ObjectIdentifier(type) == ObjectIdentifier(Int.self))
            #expect(context.codingPath.map(\.stringValue) == ["items", "Index 1", "count"])
            #expect(context.codingPath[1].intValue == 1)
            #expect(context.debugDescription == "Expected to decode Int but found a string instead.")
        }
        do {
            _ = try JSONValueDecoder().decode(Catalog.self, from: try JSONDocument(parsing: Array(#"{"title":"T","items":[{"key":"a"}]}"#.utf8)))
            Issue.record("a missing count decoded")
        } catch let DecodingError.keyNotFound(key, context) {
            #expect(key.stringValue == "count")
            #expect(context.codingPath.map(\.stringValue) == ["items", "Index 0"])
        }
    }

    @Test func scalarsAtTheRootDecode() throws {
        #expect(try decodeAll(Int8.self, "-128") == -128)
        #expect(try decodeAll(UInt64.self, "18446744073709551615") == UInt64.max)
        #expect(try decodeAll(Double.self, "1e-3") == 0.001)
        #expect(try decodeAll(String.self, #""\u0000""#) == "\u{0}")
        #expect(try decodeAll(Bool.self, "false") == false)
        #expect(try decodeAll(Int?.self, "null") == .some(nil))
        #expect(try decodeAll(Decimal.self, "12.50") == Decimal(string: "12.5"))
        #expect(try decodeAll(Int.self, "1.5") == nil)
    }

    /// Arrays of strings, integers, doubles and Booleans are read by code of their own; their values and
    /// errors (a wrong element, a non-array, the element's index in the path) stay those of the generic
    /// array reading and of the value path.
    @Test func scalarArraysDecodeAndFailAsTheGenericPath() throws {
        struct Lists: Codable, Equatable {
            let names: [String]
            let counts: [Int]
            let prices: [Double]
            let flags: [Bool]
            let nested: [[String]]
        }
        let decoded = try decodeAll(Lists.self, #"{"names":["a","\u00e9"],"counts":[1,-2],"prices":[0.5,3],"flags":[true,false],"nested":[["x"],[]]}"#)
        #expect(decoded == Lists(names: ["a", "é"], counts: [1, -2], prices: [0.5, 3], flags: [true, false], nested: [["x"], []]))
        for broken in [
            #"{"names":["a",1],"counts":[],"prices":[],"flags":[],"nested":[]}"#,
            #"{"names":[],"counts":[1,1.5],"prices":[],"flags":[],"nested":[]}"#,
            #"{"names":[],"counts":[],"prices":[null],"flags":[],"nested":[]}"#,
            #"{"names":[],"counts":[],"prices":[],"flags":[true,"no"],"nested":[]}"#,
            #"{"names":"a","counts":[],"prices":[],"flags":[],"nested":[]}"#,
            #"{"names":[],"counts":[],"prices":[],"flags":[],"nested":[["x"],[2]]}"#,
        ] {
            #expect(try decodeAll(Lists.self, broken) == nil)
        }
        do {
            _ = try JSONValueDecoder().decode(Lists.self, from: try JSONDocument(parsing: Array(#"{"names":[],"counts":[],"prices":[],"flags":[],"nested":[[],["x",2]]}"#.utf8)))
            Issue.record("a number decoded as a string")
        } catch let DecodingError.typeMismatch(type, context) {
            #expect(ObjectIdentifier(type) == ObjectIdentifier(String.self))
            #expect(context.codingPath.map(\.stringValue) == ["nested", "Index 1", "Index 1"])
        }
    }
}
