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

    /// Parses a one-shot reply (at most 4 MiB) and validates it fully; returns its value, not decoded
    /// into a Swift type (for callers that decode it themselves).
    /// - Throws: `structured_output_too_large` or `structured_output_invalid` (with the byte offset of a
    ///   JSON error).
    func acceptedValue(_ text: String) throws(AgentRuntimeError) -> JSONValue {
        try parseAndValidateOneShot(text).value
    }

    /// A one-shot reply accepted for a turn: its value, the digest stored with it and the Swift value.
    struct OneShotAcceptance: Sendable {
        /// The validated payload.
        let value: JSONValue
        /// ``AgentStructuredOutputMetadata/payloadDigest(of:)`` of its parse.
        let payloadDigest: String
        /// The payload decoded into the Swift type.
        let decoded: any Sendable
    }

    /// A payload from this size on has its digest hashed on another thread while it is decoded: the hop
    /// costs microseconds, the digest of 64 KiB about a third of a millisecond.
    static let concurrentDigestBytes = 64 * 1024

    /// Parses a one-shot reply (at most 4 MiB), validates it fully and decodes it, with the digest the
    /// turn stores hashed beside the decoding (``withPayloadDigest(of:byteCount:_:)``). An invalid reply
    /// is never hashed.
    /// - Throws: `structured_output_too_large`, `structured_output_invalid` (with the byte offset of a
    ///   JSON error) or `structured_output_decoding_failed`.
    func acceptOneShotWithDigest(_ text: String) async throws(AgentRuntimeError) -> OneShotAcceptance {
        let document = try parseAndValidateOneShot(text)
        let (accepted, digest) = try await withPayloadDigest(of: document, byteCount: text.utf8.count) { () throws(AgentRuntimeError) in
            (decoded: try decodeValidatedDocument(document), value: document.value)
        }
        return OneShotAcceptance(value: accepted.value, payloadDigest: digest, decoded: accepted.decoded)
    }

    /// The decoding of a stream's fully validated commit plus the digest stored with its message, hashed
    /// beside the decoding (``withPayloadDigest(of:byteCount:_:)``).
    /// - Throws: `structured_output_decoding_failed`.
    func decodeValidatedWithDigest(_ commit: StructuredStreamCommit) async throws(AgentRuntimeError) -> (decoded: any Sendable, payloadDigest: String) {
        try await withPayloadDigest(of: commit.document, byteCount: commit.bytes.count) { () throws(AgentRuntimeError) in
            try decodeValidatedDocument(commit.document)
        }
    }

    /// Runs `body` (the decoding of a validated payload) and hashes the payload's digest
    /// (``AgentStructuredOutputMetadata/payloadDigest(of:)``). A payload of ``concurrentDigestBytes`` or
    /// more is hashed in a child task while `body` runs, so the digest costs the turn's wall time
    /// nothing when a second core is free; a smaller one is hashed after `body`, on this task.
    private func withPayloadDigest<Result: Sendable>(
        of document: JSONDocument, byteCount: Int, _ body: () throws(AgentRuntimeError) -> Result
    ) async throws(AgentRuntimeError) -> (Result, String) {
        guard byteCount >= Self.concurrentDigestBytes else {
            let result = try body()
            return (result, AgentStructuredOutputMetadata.payloadDigest(of: document))
        }
        async let digest = AgentStructuredOutputMetadata.payloadDigest(of: document)
        let result = try body()
        return (result, await digest)
    }

    /// The first half of accepting a one-shot reply: the size limit, the parse and full validation.
    private func parseAndValidateOneShot(_ text: String) throws(AgentRuntimeError) -> JSONDocument {
        guard text.utf8.count <= Self.maximumPayloadBytes else {
            throw AgentRuntimeError(code: .structuredOutputTooLarge, message: "the structured reply exceeds 4 MiB")
        }
        let document: JSONDocument
        do {
            document = try JSONDocument(parsing: Array(text.utf8))
        } catch {
            throw AgentRuntimeError(code: .structuredOutputInvalid, message: "the structured reply is not valid JSON: \(error.code.rawValue)", byteOffset: error.byteOffset)
        }
        try check(validator.validate(document, mode: .full))
        return document
    }

    /// Decodes a fully validated document into the Swift type.
    /// - Throws: `structured_output_decoding_failed`.
    private func decodeValidatedDocument(_ document: JSONDocument) throws(AgentRuntimeError) -> any Sendable {
        do {
            return try decodeDocument(document)
        } catch {
            throw decodingFailure()
        }
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
