import CodexCore
import CodexSchema

/// An incremental parser for a streamed structured turn: prose, then one JSON value framed by
/// ``openMarker`` and ``closeMarker`` (each normally on its own line), then optional prose.
///
/// Feed it the assistant text deltas in order, then call ``finish()``:
///
/// ```swift
/// var parser = StructuredStreamParser(formatName: "reply", validator: validator)
/// for delta in deltas {
///     for output in try parser.feed(delta) { … } // .text, .partial, .committed
/// }
/// _ = try parser.finish()
/// parser.visibleText // the prose, framing stripped
/// parser.committed   // the validated payload
/// ```
///
/// **Prose.** Text outside the frame is released as ``StructuredStreamOutput/text(_:)`` as soon as it is
/// certainly not part of an open marker: only a suffix that is a proper prefix of ``openMarker`` (such
/// as `<codex`) is held back, and released unchanged once the next delta (or ``finish()``) shows it is
/// not the marker. Whitespace rule (deterministic under any split): prose before the open marker is
/// kept verbatim; whitespace directly after the close marker (typically the marker's line break) is
/// dropped. ``visibleText`` is exactly the concatenation of every `.text` output.
///
/// **Frame.** Only one frame is accepted: an open marker after the close marker throws
/// `structured_output_invalid`. The close marker ends the frame wherever it appears, also inside a JSON
/// string (a payload that must contain it can escape it, e.g. `<\/codexkit_structured_output>`). Close
/// markers in prose are ordinary text. The payload (the bytes between the markers) is limited to
/// `maximumPayloadBytes` (`structured_output_too_large`).
///
/// **Partials.** A ``PartialJSONScanner`` tracks the last safe cut in one linear pass. A snapshot
/// (payload up to the cut plus closing brackets) is parsed only when the cut advanced *and* the payload
/// has at least doubled (quadrupled beyond 64 KiB) since the previous attempt, so the parse work for an
/// N-byte payload stays below 3N plus the closing brackets of O(log N) snapshots (``parsedBytes``). Snapshots that fail to parse or
/// fail `partial` validation are skipped.
///
/// **Commit.** At the close marker the trimmed payload is parsed and validated in full; failures throw
/// `structured_output_invalid` with a message naming the failure (JSON error code and byte offset, or
/// schema keywords and schema pointers), never the payload. Decoding into a Swift type is the caller's
/// step. A message without a frame is not an error here: the caller checks ``committed``.
///
/// After a thrown error or ``finish()``, the parser is spent: further calls throw
/// `structured_output_invalid`.
struct StructuredStreamParser: Sendable {
    /// The line that opens the structured-output frame.
    static let openMarker = "<codexkit_structured_output>"
    /// The line that closes the structured-output frame.
    static let closeMarker = "</codexkit_structured_output>"

    /// Where the parser is in the message.
    private enum Phase: Sendable {
        /// Prose before the frame.
        case beforeFrame
        /// Inside the frame.
        case inFrame
        /// Prose after the committed frame.
        case afterFrame
        /// Finished or failed; no more input is accepted.
        case spent
    }

    /// The response format name (used in error messages; developer-provided, never model text).
    let formatName: String
    /// The validator for partial snapshots and the final payload.
    let validator: JSONSchemaValidator
    /// The largest accepted payload in bytes (everything between the markers but leading whitespace).
    let maximumPayloadBytes: Int
    /// A further check a partial snapshot must pass before it is emitted (the turn's decode), or `nil`.
    let acceptsPartial: (@Sendable (JSONDocument) -> Bool)?

    /// All prose released so far, framing stripped: the concatenation of every `.text` output.
    private(set) var visibleText = ""
    /// The committed payload, once the close marker arrived and the payload validated.
    private(set) var committed: StructuredStreamCommit?
    /// Whether the opening marker has been seen: the structured payload has begun.
    var hasBegunPayload: Bool {
        if case .beforeFrame = phase { return false }
        return true
    }
    /// The total number of bytes handed to the JSON parser (snapshots and the final payload).
    var parsedBytes: Int { payload.parsedBytes }

    /// The current phase.
    private var phase = Phase.beforeFrame
    /// The open-marker search over prose (before and after the frame).
    private var openSearch = StreamMarkerSearch(marker: Self.openMarker)
    /// The close-marker search inside the frame.
    private var closeSearch = StreamMarkerSearch(marker: Self.closeMarker)
    /// The frame's payload, its scanner and snapshot schedule.
    private var payload: StructuredPayloadBuffer
    /// Whether whitespace after the close marker is still being dropped.
    private var dropsWhitespace = false

    /// Creates a parser for one assistant message.
    ///
    /// - Parameters:
    ///   - formatName: The response format name, for error messages.
    ///   - validator: The compiled response schema.
    ///   - maximumPayloadBytes: The payload size limit. Default 4 MiB.
    ///   - acceptsPartial: A check of each parsed partial snapshot that passed validation (a turn passes
    ///     its decode into the Swift type), run before the snapshot's value is built; `nil` accepts all.
    init(
        formatName: String, validator: JSONSchemaValidator, maximumPayloadBytes: Int = CodexLimits.maximumStructuredPayloadBytes,
        acceptsPartial: (@Sendable (JSONDocument) -> Bool)? = nil
    ) {
        self.formatName = formatName
        self.validator = validator
        self.maximumPayloadBytes = max(1, maximumPayloadBytes)
        self.acceptsPartial = acceptsPartial
        payload = StructuredPayloadBuffer(formatName: formatName, maximumBytes: maximumPayloadBytes)
    }

    /// Consumes the next text delta.
    ///
    /// - Parameter delta: The next piece of assistant text, split anywhere.
    /// - Returns: The outputs this delta completes, in order.
    /// - Throws: ``AgentRuntimeError`` with `structured_output_invalid` (a second frame, an invalid
    ///   payload, a spent parser) or `structured_output_too_large`.
    mutating func feed(_ delta: String) throws(AgentRuntimeError) -> [StructuredStreamOutput] {
        guard phase != .spent else { throw spentError() }
        var outputs: [StructuredStreamOutput] = []
        do {
            try process(Array(delta.utf8)[...], into: &outputs)
        } catch {
            phase = .spent
            throw error
        }
        return outputs
    }

    /// Ends the message: releases held-back prose.
    ///
    /// - Returns: The final `.text` output, if any prose was held back.
    /// - Throws: ``AgentRuntimeError`` with `structured_output_invalid` when the frame was never closed
    ///   (or the parser is spent).
    mutating func finish() throws(AgentRuntimeError) -> [StructuredStreamOutput] {
        let current = phase
        phase = .spent
        var outputs: [StructuredStreamOutput] = []
        switch current {
        case .beforeFrame, .afterFrame:
            emitText(openSearch.flush(), into: &outputs)
        case .inFrame:
            throw AgentRuntimeError(
                code: .structuredOutputInvalid,
                message: "the structured output '\(formatName)' frame was not closed before the message ended"
            )
        case .spent:
            throw spentError()
        }
        return outputs
    }

    /// Routes `input` through the phases, switching at each marker.
    private mutating func process(_ input: ArraySlice<UInt8>, into outputs: inout [StructuredStreamOutput]) throws(AgentRuntimeError) {
        var remaining = input
        while !remaining.isEmpty {
            switch phase {
            case .beforeFrame, .afterFrame:
                switch openSearch.scan(remaining) {
                case .noMarker(let released):
                    emitText(released, into: &outputs)
                    remaining = []
                case .marker(let before, let after):
                    guard phase == .beforeFrame else {
                        throw AgentRuntimeError(
                            code: .structuredOutputInvalid,
                            message: "the message opened a second structured output frame; only one is accepted"
                        )
                    }
                    emitText(before, into: &outputs)
                    phase = .inFrame
                    remaining = after[...]
                }
            case .inFrame:
                switch closeSearch.scan(remaining) {
                case .noMarker(let released):
                    try payload.append(released)
                    remaining = []
                    if let snapshot = payload.snapshot(validatedBy: validator, accepting: acceptsPartial) { outputs.append(snapshot) }
                case .marker(let before, let after):
                    try payload.append(before)
                    let commit = try payload.commit(validatedBy: validator)
                    committed = commit
                    outputs.append(.committed(commit))
                    phase = .afterFrame
                    dropsWhitespace = true
                    remaining = after[...]
                }
            case .spent:
                throw spentError()
            }
        }
    }

    /// Emits prose as `.text`, dropping whitespace right after the close marker; empty text is not emitted.
    private mutating func emitText(_ bytes: [UInt8], into outputs: inout [StructuredStreamOutput]) {
        var start = 0
        if dropsWhitespace {
            while start < bytes.count, PartialJSONScanner.isWhitespace(bytes[start]) { start += 1 }
            if start < bytes.count { dropsWhitespace = false }
        }
        guard start < bytes.count else { return }
        let text = String(decoding: bytes[start...], as: UTF8.self)
        visibleText += text
        outputs.append(.text(text))
    }

    /// The error for a call on a spent parser.
    private func spentError() -> AgentRuntimeError {
        AgentRuntimeError(
            code: .structuredOutputInvalid,
            message: "the structured output stream already finished or failed"
        )
    }
}
