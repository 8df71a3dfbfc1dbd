import CodexSchema
import CodexTestSupport
import Testing

/// Every prefix of every conformance document, and random byte flips: the parser must return a value or a
/// typed error, never crash or hang, and what it accepts must survive a canonical round trip.
@Suite struct JSONFuzzTests {
    static let documents: [String] = (try? Fixtures.files(in: "jsonschema/supported")).map { $0.map { "jsonschema/supported/\($0)" } } ?? []

    @Test(arguments: documents)
    func everyPrefixParsesOrFailsWithATypedError(path: String) async throws {
        let bytes = try Fixtures.bytes(path)
        var accepted = 0
        var ticker = CooperativeTicker()
        for length in 0...bytes.count {
            await ticker.tick()
            if let value = try? JSONValue(parsing: bytes[0..<length], options: .init(maximumDepth: 256)) {
                accepted += 1
                #expect(try JSONValue(parsing: value.canonicalBytes(), options: .init(maximumDepth: 256)) == value)
            }
        }
        // The whole file parses; a few prefixes (ending after whitespace) may too. Most must not.
        #expect(accepted >= 1)
        #expect(accepted < 8)
    }

    @Test func everyPrefixOfEveryRejectedSchemaParsesOrFailsWithATypedError() async throws {
        guard case .array(let entries) = try JSONValue(parsing: try Fixtures.bytes("jsonschema/rejected.json"), options: .init(maximumDepth: 256)) else {
            Issue.record("rejected.json is not an array")
            return
        }
        #expect(entries.count == 297)
        var ticker = CooperativeTicker()
        for entry in entries {
            await ticker.tick()
            let bytes = (entry["schema"] ?? .null).canonicalBytes()
            for length in 0..<bytes.count {
                do {
                    let value = try JSONValue(parsing: bytes[0..<length])
                    Issue.record("a strict prefix parsed: \(value)")
                } catch {
                    #expect(error.byteOffset != nil)
                }
            }
        }
    }

    @Test(arguments: documents)
    func randomByteFlipsNeverCrash(path: String) throws {
        let original = try Fixtures.bytes(path)
        var generator = SplitMix64(seed: UInt64(truncatingIfNeeded: path.utf8.reduce(0) { $0 &* 31 &+ Int($1) }))
        for _ in 0..<300 {
            var bytes = original
            for _ in 0..<Int(generator.next() % 3 + 1) {
                let position = Int(generator.next() % UInt64(bytes.count))
                bytes[position] = UInt8(truncatingIfNeeded: generator.next())
            }
            if let value = try? JSONValue(parsing: bytes, options: .init(maximumDepth: 256)) {
                #expect(try JSONValue(parsing: value.canonicalBytes(), options: .init(maximumDepth: 256)) == value)
            }
            _ = try? JSONDocument(parsing: bytes, options: .init(maximumDepth: 256))
        }
    }
}

/// A small deterministic generator for reproducible fuzz inputs.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
