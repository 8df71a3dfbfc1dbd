import CodexSchema

extension StructuredStreamParser {
    /// The developer message that tells the model the streamed structured-output contract: prose first,
    /// then exactly one JSON value between ``openMarker`` and ``closeMarker``, each on its own line.
    ///
    /// ```text
    /// Response contract
    /// Write any prose for the user first. Then return the final result exactly once, serialized as
    /// `shipping_reply_draft` JSON matching this JSON schema: {"type":"object",…}
    /// Put the JSON between these two markers, each marker on its own line:
    /// <codexkit_structured_output>
    /// …
    /// ```
    ///
    /// - Parameters:
    ///   - formatName: The response format name.
    ///   - schema: The schema document, rendered compactly in its own key order.
    /// - Returns: The message text (lines separated by `\n`, no trailing newline).
    static func frameInstructions(formatName: String, schema: JSONValue) -> String {
        [
            "Response contract",
            "Write any prose for the user first. Then return the final result exactly once, serialized as "
                + "`\(formatName)` JSON matching this JSON schema: \(schema.compactString())",
            "Put the JSON between these two markers, each marker on its own line:",
            openMarker,
            "{ ...the JSON value... }",
            closeMarker,
            "Write nothing else between the markers and do not open the markers a second time.",
        ].joined(separator: "\n")
    }
}
