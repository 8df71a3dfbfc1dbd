import CodexCore
import CodexSchema

/// The payload of a structured-output frame while it streams: it accumulates the bytes between the
/// markers, scans them once with a ``PartialJSONScanner``, produces validated partial snapshots on a
/// geometric schedule and parses and validates the whole payload at the end.
///
/// Snapshot schedule: a snapshot is attempted only when the safe cut has advanced since the previous
/// attempt and the payload has reached twice its size at that attempt (the first attempt needs one
/// byte). The attempted snapshots therefore total less than 2N bytes for an N-byte payload, plus at
/// most ``JSONParsingOptions/maximumDepth`` closing brackets each, and the final parse adds N.
struct StructuredPayloadBuffer: Sendable {
    /// The response format name, for error messages.
    let formatName: String
    /// The largest accepted payload in bytes.
    let maximumBytes: Int
    /// The parser limits for snapshots and the final payload.
    let parsingOptions: JSONParsingOptions
    /// The total number of bytes handed to the JSON parser.
    private(set) var parsedBytes = 0
    /// The payload so far, without leading whitespace.
    private(set) var bytes: [UInt8] = []
    /// The structural scanner over ``bytes``.
    private var scanner = PartialJSONScanner()
    /// The safe cut at the last snapshot attempt.
    private var lastAttemptCut = 0
    /// The payload size the next snapshot attempt waits for.
    private var nextAttemptSize = 1
    /// The payload size from which the snapshot schedule grows fourfold instead of twofold.
    static var quadruplingThreshold: Int { 64 * 1024 }

    /// Creates an empty payload.
    ///
    /// - Parameters:
    ///   - formatName: The response format name, for error messages.
    ///   - maximumBytes: The payload size limit (at least 1).
    init(formatName: String, maximumBytes: Int) {
        self.formatName = formatName
        self.maximumBytes = max(1, maximumBytes)
        // Snapshots add at most `maximumDepth` closing brackets to a prefix of the payload.
        let defaults = JSONParsingOptions()
        parsingOptions = JSONParsingOptions(maximumDepth: defaults.maximumDepth, maximumBytes: self.maximumBytes + defaults.maximumDepth)
    }

    /// Appends frame bytes, skipping whitespace before the first payload byte, and scans them.
    ///
    /// - Throws: ``AgentRuntimeError`` with `structured_output_too_large` past ``maximumBytes``.
    mutating func append(_ chunk: [UInt8]) throws(AgentRuntimeError) {
        var start = 0
        if bytes.isEmpty {
            while start < chunk.count, PartialJSONScanner.isWhitespace(chunk[start]) { start += 1 }
        }
        guard start < chunk.count else { return }
        guard chunk.count - start <= maximumBytes - bytes.count else {
            throw AgentRuntimeError(
                code: .structuredOutputTooLarge,
                message: "the structured output '\(formatName)' exceeded \(maximumBytes) bytes"
            )
        }
        let old = bytes.count
        bytes.append(contentsOf: chunk[start...])
        scanner.scan(bytes[old...])
    }

    /// Attempts a partial snapshot when the schedule allows one.
    ///
    /// - Parameters:
    ///   - validator: The response schema, applied in `partial` mode.
    ///   - accepts: A further check of the parsed snapshot (the caller's decode), run before its value is built.
    /// - Returns: A `.partial` output when the snapshot parses, validates and is accepted; `nil` otherwise
    ///   (also when no attempt was due). Failures are not errors: the final payload decides.
    mutating func snapshot(
        validatedBy validator: JSONSchemaValidator, accepting accepts: (@Sendable (JSONDocument) -> Bool)? = nil
    ) -> StructuredStreamOutput? {
        let cut = scanner.safeCut
        guard cut > lastAttemptCut, bytes.count >= nextAttemptSize else { return nil }
        lastAttemptCut = cut
        // Double up to 64 KiB (frequent previews of typical payloads), then quadruple: large payloads
        // spend at most a third of one parse on snapshots, and the total stays linear either way.
        nextAttemptSize = bytes.count * (bytes.count < Self.quadruplingThreshold ? 2 : 4)
        // Deeper snapshots cannot parse; skip them without spending parse work.
        guard scanner.depth <= parsingOptions.maximumDepth else { return nil }
        var text = Array(bytes[..<cut])
        text.append(contentsOf: scanner.closers)
        parsedBytes += text.count
        // Validate and check the parsed tape directly; the value tree is built only for a snapshot that passes.
        guard let document = try? JSONDocument(parsing: text, options: parsingOptions),
              let result = try? validator.validate(document, mode: .partial), result.isValid,
              accepts?(document) ?? true
        else { return nil }
        return .partial(document.value, bytes: text)
    }

    /// Parses and validates the whole payload (the frame has closed).
    ///
    /// - Parameter validator: The response schema, applied in `full` mode.
    /// - Returns: The commit: the value and the payload text without surrounding whitespace.
    /// - Throws: ``AgentRuntimeError`` with `structured_output_invalid` for an empty frame, malformed JSON
    ///   (JSON error code and byte offset in the message) or schema failures (keywords and schema
    ///   pointers in the message, every failure in ``AgentRuntimeError/underlying``). The message never
    ///   contains payload text.
    mutating func commit(validatedBy validator: JSONSchemaValidator) throws(AgentRuntimeError) -> StructuredStreamCommit {
        var end = bytes.count
        while end > 0, PartialJSONScanner.isWhitespace(bytes[end - 1]) { end -= 1 }
        let text = Array(bytes[..<end])
        guard !text.isEmpty else {
            throw AgentRuntimeError(code: .structuredOutputInvalid, message: "the structured output '\(formatName)' frame holds no JSON value")
        }
        parsedBytes += text.count
        let document: JSONDocument
        do {
            document = try JSONDocument(parsing: text, options: parsingOptions)
        } catch {
            throw AgentRuntimeError(
                code: .structuredOutputInvalid,
                message: "the structured output '\(formatName)' is not valid JSON (\(error.code.rawValue))",
                byteOffset: error.byteOffset,
                underlying: error
            )
        }
        let result: JSONValidationResult
        do {
            result = try validator.validate(document, mode: .full)
        } catch {
            throw AgentRuntimeError(
                code: .structuredOutputInvalid,
                message: "the structured output '\(formatName)' could not be validated (\(error.code.rawValue))",
                underlying: error
            )
        }
        guard result.isValid else {
            throw AgentRuntimeError(
                code: .structuredOutputInvalid,
                message: "the structured output '\(formatName)' does not match its schema: \(Self.summary(of: result.errors))",
                underlying: StructuredOutputSchemaViolation(errors: result.errors)
            )
        }
        return StructuredStreamCommit(value: document.value, bytes: text, document: document)
    }

    /// `keyword at schema pointer` for the first three failures, then how many more there are. Schema
    /// pointers come from the developer's schema; instance pointers (which may hold model-written keys)
    /// are left out.
    private static func summary(of errors: [JSONValidationError]) -> String {
        let shown = errors.prefix(3).map { error in
            "\(error.keyword) at \(error.schemaPointer.isEmpty ? "(root)" : error.schemaPointer)"
        }
        let more = errors.count > shown.count ? " and \(errors.count - shown.count) more" : ""
        return shown.joined(separator: "; ") + more
    }
}
