package import CodexCore

/// A package-internal entry for `codexctl bench runtime`: runs the streamed-structured frame parser
/// alone over text deltas, as a turn would feed it.
package enum StructuredStreamBenchmark {
    /// Feeds `deltas` to a parser for `format` and finishes it.
    /// - Returns: The partial snapshots emitted, the bytes handed to the JSON parser, and whether a
    ///   payload was committed.
    package static func parse(_ deltas: [String], format: AgentStructuredOutputFormat) throws -> (partials: Int, parsedBytes: Int, committed: Bool) {
        var parser = StructuredStreamParser(formatName: format.name, validator: try format.validator())
        var partials = 0
        for delta in deltas {
            for output in try parser.feed(delta) {
                if case .partial = output { partials += 1 }
            }
        }
        _ = try parser.finish()
        return (partials, parser.parsedBytes, parser.committed != nil)
    }
}
