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
        let (accepted, roundTripFailures) = try await runOffCooperativePool { () -> (Int, Int) in
            var accepted = 0
            var roundTripFailures = 0
            for length in 0...bytes.count {
                if let value = try? JSONValue(parsing: bytes[0..<length], options: .init(maximumDepth: 256)) {
                    accepted += 1
                    if (try? JSONValue(parsing: value.canonicalBytes(), options: .init(maximumDepth: 256))) != value { roundTripFailures += 1 }
                }
            }
            return (accepted, roundTripFailures)
        }
        // The whole file parses; a few prefixes (ending after whitespace) may too. Most must not.
        #expect(accepted >= 1)
        #expect(accepted < 8)
        #expect(roundTripFailures == 0)
    }

    @Test func everyPrefixOfEveryRejectedSchemaParsesOrFailsWithATypedError() async throws {
        guard case .array(let entries) = try JSONValue(parsing: try Fixtures.bytes("jsonschema/rejected.json"), options: .init(maximumDepth: 256)) else {
            Issue.record("rejected.json is not an array")
            return
        }
        #expect(entries.count == 297)
        let (prefixes, parsed, withoutOffset) = try await runOffCooperativePool { () -> (Int, Int, Int) in
            var prefixes = 0
            var parsed = 0
            var withoutOffset = 0
            for entry in entries {
                let bytes = (entry["schema"] ?? .null).canonicalBytes()
                for length in 0..<bytes.count {
                    prefixes += 1
                    do throws(CodexSchemaError) {
                        _ = try JSONValue(parsing: bytes[0..<length])
                        parsed += 1
                    } catch {
                        if error.byteOffset == nil { withoutOffset += 1 }
                    }
                }
            }
            return (prefixes, parsed, withoutOffset)
        }
        #expect(prefixes > 10_000)
        #expect(parsed == 0)
        #expect(withoutOffset == 0)
    }

    @Test(arguments: documents)
    func randomByteFlipsNeverCrash(path: String) async throws {
        let original = try Fixtures.bytes(path)
        let mismatches = try await runOffCooperativePool { Self.flipBytesAndCountRoundTripMismatches(original, path: path) }
        #expect(mismatches == 0)
    }

    /// Parses 300 randomly corrupted copies of `original` and counts the ones that parse but do not
    /// survive a canonical round trip.
    private static func flipBytesAndCountRoundTripMismatches(_ original: [UInt8], path: String) -> Int {
        var mismatches = 0
        var generator = SplitMix64(seed: UInt64(truncatingIfNeeded: path.utf8.reduce(0) { $0 &* 31 &+ Int($1) }))
        for _ in 0..<300 {
            var bytes = original
            for _ in 0..<Int(generator.next() % 3 + 1) {
                let position = Int(generator.next() % UInt64(bytes.count))
                bytes[position] = UInt8(truncatingIfNeeded: generator.next())
            }
            if let value = try? JSONValue(parsing: bytes, options: .init(maximumDepth: 256)),
               (try? JSONValue(parsing: value.canonicalBytes(), options: .init(maximumDepth: 256))) != value {
                mismatches += 1
            }
            _ = try? JSONDocument(parsing: bytes, options: .init(maximumDepth: 256))
        }
        return mismatches
    }
}

/// A small deterministic generator for reproducible fuzz inputs.
