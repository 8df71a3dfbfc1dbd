import CodexCore
import CodexSchema
import Foundation
import Synchronization

/// A structured response contract prepared for one turn: the format, its compiled validator and the
/// decoder into the caller's Swift type.
struct StructuredContract: Sendable {
    /// One-shot JSON payloads (and framed stream payloads) are limited to 4 MiB.
    static let maximumPayloadBytes = CodexLimits.maximumStructuredPayloadBytes

    let format: AgentStructuredOutputFormat
    let validator: JSONSchemaValidator
    let typeName: String
    let decode: @Sendable (JSONValue) throws -> any Sendable
    /// The same decode from a parsed document, reading its tape without building a value.
    let decodeDocument: @Sendable (JSONDocument) throws -> any Sendable

    /// Checks the schema (before the turn starts) and captures the decoder for `Output`.
    init<Output: AgentStructuredOutput>(_ type: Output.Type) throws {
        format = Output.responseFormat
        validator = try format.validator()
        typeName = String(describing: Output.self)
        decode = { value in try JSONValueDecoder().decode(Output.self, from: value) }
        decodeDocument = { document in try JSONValueDecoder().decode(Output.self, from: document) }
    }

    /// A contract known only at run time: the validated payload itself is the value (a ``CodexSchema/JSONValue``).
    init(format: AgentStructuredOutputFormat) throws {
        self.format = format
        validator = try format.validator()
        typeName = format.name
        decode = { value in value }
        decodeDocument = { document in document.value }
    }

    /// Decodes an already fully validated payload into the Swift type (from the parsed value: exact
    /// numbers, `JSONDecoder`'s default strategies, the type's own `init(from:)`).
    /// - Throws: `structured_output_decoding_failed`.
    func decodeValidated(_ value: JSONValue) throws(AgentRuntimeError) -> any Sendable {
        do {
            return try decode(value)
        } catch {
            throw decodingFailure()
        }
    }

    /// Decodes an already fully validated commit into the Swift type, from its parsed document.
    /// - Throws: `structured_output_decoding_failed`.
    func decodeValidated(_ commit: StructuredStreamCommit) throws(AgentRuntimeError) -> any Sendable {
        do {
            return try decodeDocument(commit.document)
        } catch {
            throw decodingFailure()
        }
    }

    private func decodingFailure() -> AgentRuntimeError {
        AgentRuntimeError(code: .structuredOutputDecodingFailed, message: "the structured reply does not decode into \(typeName)")
    }

    /// Validates `value` fully and decodes `bytes` into the Swift type.
    /// - Throws: `structured_output_invalid` or `structured_output_decoding_failed` (messages name the
    ///   failing keyword and schema location, never the payload or its keys).
    func accept(_ value: JSONValue) throws(AgentRuntimeError) -> any Sendable {
        try check(validator.validate(JSONDocument(value), mode: .full))
        return try decodeValidated(value)
    }

    /// Parses a one-shot reply (at most 4 MiB), validates and decodes it.
    func acceptOneShot(_ text: String) throws(AgentRuntimeError) -> (value: JSONValue, document: JSONDocument, decoded: any Sendable) {
        guard text.utf8.count <= Self.maximumPayloadBytes else {
            throw AgentRuntimeError(code: .structuredOutputTooLarge, message: "the structured reply exceeds 4 MiB")
        }
        let bytes = Array(text.utf8)
        let document: JSONDocument
        do {
            document = try JSONDocument(parsing: bytes)
        } catch {
            throw AgentRuntimeError(code: .structuredOutputInvalid, message: "the structured reply is not valid JSON: \(error.code.rawValue)", byteOffset: error.byteOffset)
        }
        try check(validator.validate(document, mode: .full))
        let decoded: any Sendable
        do {
            decoded = try decodeDocument(document)
        } catch {
            throw decodingFailure()
        }
        return (document.value, document, decoded)
    }

    /// Turns a validation outcome into `structured_output_invalid`.
    private func check(_ validation: @autoclosure () throws(CodexSchemaError) -> JSONValidationResult) throws(AgentRuntimeError) {
        let result: JSONValidationResult
        do {
            result = try validation()
        } catch {
            throw AgentRuntimeError(code: .structuredOutputInvalid, message: "the structured reply could not be validated: \(error.code.rawValue)")
        }
        if let first = result.errors.first {
            throw AgentRuntimeError(
                code: .structuredOutputInvalid,
                message: "the structured reply does not match '\(format.name)': \(first.keyword) at '\(first.schemaPointer)'"
            )
        }
    }

    /// Whether a partial snapshot decodes into the Swift type (a partial is emitted only then).
    func decodes(_ value: JSONValue) -> Bool {
        (try? decode(value)) != nil
    }

    /// A frame parser for this contract whose partial snapshots are emitted only when they decode.
    func streamParser() -> StructuredStreamParser {
        let decodeDocument = decodeDocument
        return StructuredStreamParser(
            formatName: format.name, validator: validator, acceptsPartial: { document in (try? decodeDocument(document)) != nil }
        )
    }
}
