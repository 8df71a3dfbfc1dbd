/// Bounds on schema compilation and validation work.
///
/// A schema beyond the structural bounds fails compilation; a validation that needs more work than
/// ``maximumValidationWork`` subschema evaluations, or recurses deeper than ``maximumEvaluationDepth``
/// (for example a `$ref` cycle that never consumes the instance), fails with
/// `schema_work_limit_exceeded` instead of running for long.
public struct JSONSchemaLimits: Sendable, Hashable {
    /// The deepest nesting of subschemas accepted. Default 64.
    public var maximumSchemaDepth: Int
    /// The most subschema positions accepted. Default 10,000.
    public var maximumSchemaNodes: Int
    /// The most subschema evaluations one validation may perform. Default 10,000,000.
    public var maximumValidationWork: Int
    /// The deepest chain of nested subschema evaluations one validation may build. Default 512.
    public var maximumEvaluationDepth: Int
    /// The most failures one validation reports (the rest are counted in
    /// ``JSONValidationResult/errorCount``, so a hostile instance cannot grow the report without bound).
    /// Default 1,000.
    public var maximumReportedErrors: Int

    /// Creates limits; each value is raised to at least 1.
    ///
    /// - Parameters:
    ///   - maximumSchemaDepth: Deepest subschema nesting. Default 64.
    ///   - maximumSchemaNodes: Most subschema positions. Default 10,000.
    ///   - maximumValidationWork: Most subschema evaluations per validation. Default 10,000,000.
    ///   - maximumEvaluationDepth: Deepest evaluation chain per validation. Default 512.
    ///   - maximumReportedErrors: Most failures reported per validation. Default 1,000.
    public init(
        maximumSchemaDepth: Int = 64,
        maximumSchemaNodes: Int = 10_000,
        maximumValidationWork: Int = 10_000_000,
        maximumEvaluationDepth: Int = 512,
        maximumReportedErrors: Int = 1_000
    ) {
        self.maximumSchemaDepth = max(1, maximumSchemaDepth)
        self.maximumSchemaNodes = max(1, maximumSchemaNodes)
        self.maximumValidationWork = max(1, maximumValidationWork)
        self.maximumEvaluationDepth = max(1, maximumEvaluationDepth)
        self.maximumReportedErrors = max(1, maximumReportedErrors)
    }
}
