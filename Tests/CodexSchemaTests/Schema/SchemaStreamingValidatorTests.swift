@testable import CodexSchema
import CodexTestSupport
import Foundation
import Testing

/// Validating while parsing gives exactly what parsing first and evaluating the whole tape gives:
/// the same errors in the same order, the same counts, the same verdicts, the same parse and work-limit
/// errors. Checked over the JSON-Schema-Test-Suite corpus and over seeded random schemas and documents,
/// well-formed and broken.
@Suite struct SchemaStreamingValidatorTests {
    /// The two paths' outcome for one validation, compared as a whole.
    enum Outcome: Equatable, CustomStringConvertible {
        case result(errors: [JSONValidationError], count: Int)
        case failure(code: String, offset: Int?, message: String)

        var description: String {
            switch self {
            case .result(let errors, let count): return "\(count) errors: \(errors.map(\.description))"
            case .failure(let code, let offset, let message): return "\(code) at \(offset.map(String.init) ?? "-"): \(message)"
            }
        }
    }

    static func outcome(_ body: () throws(CodexSchemaError) -> JSONValidationResult) -> Outcome {
        do throws(CodexSchemaError) {
            let result = try body()
            return .result(errors: result.errors, count: result.errorCount)
        } catch {
            return .failure(code: error.code.rawValue, offset: error.byteOffset, message: error.message)
        }
    }

    /// Whole tape vs streaming, for both modes and both collection settings.
    static func compare(_ validator: JSONSchemaValidator, _ text: [UInt8], options: JSONParsingOptions = .init(), context: String) {
        for mode in [JSONValidationMode.full, .partial] {
            let whole = outcome { () throws(CodexSchemaError) -> JSONValidationResult in
                let document = try JSONDocument(parsing: text, options: options)
                return try validator.validate(document, mode: mode)
            }
            let streamed = outcome { () throws(CodexSchemaError) -> JSONValidationResult in
                try text.withUnsafeBufferPointer { buffer throws(CodexSchemaError) in
                    try validator.validateStreaming(buffer, options: options, mode: mode, collect: true)
                }
            }
            #expect(streamed == whole, "\(context) (\(mode))")
            let wholeVerdict = outcome { () throws(CodexSchemaError) -> JSONValidationResult in
                let document = try JSONDocument(parsing: text, options: options)
                return try validator.isValid(document, mode: mode) ? JSONValidationResult(errors: []) : .invalidVerdict
            }
            let streamedVerdict = outcome { () throws(CodexSchemaError) -> JSONValidationResult in
                try text.withUnsafeBufferPointer { buffer throws(CodexSchemaError) in
                    try validator.validateStreaming(buffer, options: options, mode: mode, collect: false)
                }
            }
            #expect(streamedVerdict == wholeVerdict, "\(context) verdict (\(mode))")
        }
    }

    @Test func theConformanceCorpusGivesTheSameResultBothWays() throws {
        var cases = 0
        for file in JSONSchemaTestSuiteTests.supportedFiles {
            let suite = try JSONValue(parsing: try Fixtures.bytes("jsonschema/supported/\(file)"))
            for group in suite.arrayValue ?? [] {
                guard let schema = group["schema"], let validator = try? JSONSchemaValidator(schema: schema) else { continue }
                for test in group["tests"]?.arrayValue ?? [] {
                    guard let data = test["data"] else { continue }
                    Self.compare(validator, Array(data.canonicalString().utf8), context: "\(file) \(group["description"]?.stringValue ?? "")")
                    cases += 1
                }
            }
        }
        #expect(cases == 344)
    }

    @Test func seededRandomSchemasAndDocumentsGiveTheSameResultBothWays() throws {
        var random = SplitMix64(seed: 0xC0DE_C0DE)
        var compared = 0
        for round in 0..<1_000 {
            let schema = RandomSchema.make(&random, depth: 0)
            // Tight work and depth bounds in some rounds, so the limits are hit at the same point both ways.
            let limits = JSONSchemaLimits(
                maximumValidationWork: [3, 6, 12, 25, 400][round % 5], maximumEvaluationDepth: round % 3 == 0 ? 3 : 512, maximumReportedErrors: 7
            )
            guard let validator = try? JSONSchemaValidator(schema: schema, limits: limits) else { continue }
            for sample in 0..<6 {
                let document = RandomSchema.document(&random, depth: 0)
                var text = Array(document.canonicalString().utf8)
                // Some documents are broken: cut short, given a duplicate key or a trailing comma.
                switch sample {
                case 4 where text.count > 2: text = Array(text.prefix(Int(random.next() % UInt64(text.count))))
                case 5: text = Array(#"{"k":1,"x":"#.utf8) + text + Array(#","k":2}"#.utf8)
                default: break
                }
                Self.compare(validator, text, context: "round \(round) sample \(sample): \(schema.canonicalString()) on \(String(decoding: text, as: UTF8.self))")
                compared += 1
            }
        }
        #expect(compared > 5_000)
    }

    @Test func aLargeDocumentIsValidatedWithoutHoldingItsTape() async throws {
        // Through the public API: over the threshold, so the streaming path runs. Two passes over 9.5 MB
        // take about 25 s in a debug build: off the cooperative pool, which they would hold all along.
        let (size, result, valid) = try await runOffCooperativePool { () throws -> (Int, JSONValidationResult, Bool) in
            let element = #"{"id":1,"name":"x","tags":["a","b"]}"#
            let text = Array(("[" + Array(repeating: element, count: 250_000).joined(separator: ",") + ",{\"id\":\"bad\"}]").utf8)
            let validator = try JSONSchemaValidator(schema: [
                "type": "array", "items": ["type": "object", "properties": ["id": ["type": "integer"]], "required": ["id", "name"]],
            ])
            return (text.count, try validator.validate(jsonBytes: text), try validator.isValid(jsonBytes: text))
        }
        #expect(size > JSONSchemaValidator.streamingThreshold)
        #expect(result.errors.map(\.instancePointer) == ["/250000/id", "/250000"])
        #expect(result.errors.map(\.keyword) == ["type", "required"])
        #expect(valid == false)
    }

    @Test func reportedErrorsAreCappedAndCounted() throws {
        let text = Array(("[" + Array(repeating: "{}", count: 5_000).joined(separator: ",") + "]").utf8)
        let validator = try JSONSchemaValidator(schema: ["items": ["required": ["a"]]])
        let whole = try validator.validate(JSONDocument(parsing: text))
        #expect(whole.errors.count == 1_000)
        #expect(whole.errorCount == 5_000)
        #expect(whole.isTruncated)
        let streamed = try text.withUnsafeBufferPointer { try validator.validateStreaming($0, options: .init(), mode: .full, collect: true) }
        #expect(streamed == whole)
    }
}


/// Random schemas over the supported keywords and random documents that sometimes match them.
enum RandomSchema {
    static let keys = ["a", "b", "c", "k", "a~b/c"]

    static func make(_ random: inout SplitMix64, depth: Int) -> JSONValue {
        let roll = random.next() % (depth > 3 ? 6 : 16)
        switch roll {
        case 0: return true
        case 1: return false
        case 2: return ["type": .string(["string", "integer", "number", "boolean", "null"].randomElement(using: &random) ?? "null")]
        case 3: return ["enum": [1, "a", ["a": 1], [1, 2]]]
        case 4: return ["const": ["a": true]]
        case 5: return ["minimum": 0, "maxLength": 2]
        case 6, 7, 8:
            var properties: JSONObject = [:]
            for key in keys where random.next() % 2 == 0 { properties[key] = make(&random, depth: depth + 1) }
            var schema: JSONObject = ["properties": .object(properties)]
            if random.next() % 2 == 0 { schema["type"] = "object" }
            if random.next() % 2 == 0 { schema["required"] = .array(keys.filter { _ in random.next() % 3 == 0 }.map(JSONValue.string)) }
            switch random.next() % 3 {
            case 0: schema["additionalProperties"] = false
            case 1: schema["additionalProperties"] = make(&random, depth: depth + 1)
            default: break
            }
            if random.next() % 3 == 0 { schema["minProperties"] = 1 }
            if random.next() % 3 == 0 { schema["maxProperties"] = 2 }
            return .object(schema)
        case 9, 10, 11:
            var schema: JSONObject = ["items": make(&random, depth: depth + 1)]
            if random.next() % 2 == 0 { schema["type"] = "array" }
            if random.next() % 3 == 0 { schema["minItems"] = 2 }
            if random.next() % 3 == 0 { schema["maxItems"] = 3 }
            if random.next() % 4 == 0 { schema["uniqueItems"] = true }
            return .object(schema)
        case 12: return ["anyOf": [make(&random, depth: depth + 1), make(&random, depth: depth + 1)]]
        case 13: return ["oneOf": [make(&random, depth: depth + 1), ["type": "object"]]]
        case 14: return ["not": make(&random, depth: depth + 1)]
        default: return ["allOf": [make(&random, depth: depth + 1)], "type": ["object", "array"]]
        }
    }

    static func document(_ random: inout SplitMix64, depth: Int) -> JSONValue {
        switch random.next() % (depth > 3 ? 5 : 9) {
        case 0: return .null
        case 1: return .bool(random.next() % 2 == 0)
        case 2: return .number(JSONNumber(Int(random.next() % 7) - 2))
        case 3: return .string(["", "a", "ab", "abc"][Int(random.next() % 4)])
        case 4: return 1.5
        case 5, 6:
            var object: JSONObject = [:]
            for key in keys where random.next() % 2 == 0 { object[key] = document(&random, depth: depth + 1) }
            return .object(object)
        default:
            return .array((0..<Int(random.next() % 5)).map { _ in document(&random, depth: depth + 1) })
        }
    }
}
