/// A compiled JSON Schema (supported subset) that validates instances.
///
/// Compilation accepts exactly the subset that CodexKit promises to enforce: Boolean schemas; `type`,
/// `properties`, `required`, `additionalProperties`, `items` (one schema), `enum`, `const`, `anyOf`,
/// `oneOf`, `allOf`, `not`, `$defs`, `definitions` and root-local `$ref` (`#` or `#/…`, percent-encoded
/// JSON pointers); `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`,
/// `minLength`, `maxLength` (Unicode scalars), `minItems`, `maxItems`, `uniqueItems`, `minProperties`,
/// `maxProperties`. The annotations `$schema`, `$id`, `$comment`, `title`, `description`, `default`,
/// `examples`, `deprecated`, `readOnly` and `writeOnly` are accepted and ignored. Any other keyword, a
/// remote, relative or anchor `$ref`, and an array-form `items` fail compilation with
/// `unsupported_schema_keyword` and the JSON pointer of each offending keyword, rather than being
/// silently ignored.
///
/// ```swift
/// let validator = try JSONSchemaValidator(schema: .object(
///     properties: ["name": .string(), "age": .integer],
///     required: ["name"]
/// ))
/// let result = try validator.validate(try JSONValue(parsing: #"{"age": 3}"#))
/// result.errors.first?.keyword // "required"
/// ```
///
/// - Important: Validators are immutable and `Sendable`; one instance may validate on many threads.
public struct JSONSchemaValidator: Sendable {
    private let program: SchemaProgram

    /// Compiles a raw schema document.
    ///
    /// - Parameters:
    ///   - schema: The schema, an object or a Boolean.
    ///   - limits: Structural and work bounds.
    /// - Throws: ``CodexSchemaError`` with `unsupported_schema_keyword`, `invalid_schema`,
    ///   `schema_depth_limit_exceeded` or `schema_node_limit_exceeded`.
    public init(schema: JSONValue, limits: JSONSchemaLimits = .init()) throws(CodexSchemaError) {
        var compiler = SchemaCompiler(limits: limits)
        program = try compiler.compile(schema)
    }

    /// Compiles a schema built with the ``JSONSchema`` DSL.
    ///
    /// - Throws: ``CodexSchemaError`` as for ``init(schema:limits:)-(JSONValue,_)``.
    public init(schema: JSONSchema, limits: JSONSchemaLimits = .init()) throws(CodexSchemaError) {
        try self.init(schema: schema.jsonValue, limits: limits)
    }

    /// Validates an instance and returns every failure.
    ///
    /// - Parameters:
    ///   - instance: The value to check.
    ///   - mode: ``JSONValidationMode/full`` or, for streamed snapshots, ``JSONValidationMode/partial``.
    /// - Returns: The result; ``JSONValidationResult/isValid`` when there are no errors.
    /// - Throws: ``CodexSchemaError`` with `schema_work_limit_exceeded` when the work bound is hit.
    public func validate(_ instance: JSONValue, mode: JSONValidationMode = .full) throws(CodexSchemaError) -> JSONValidationResult {
        try JSONTape(encoding: instance).withView(source: UnsafeBufferPointer(start: nil, count: 0)) { view throws(CodexSchemaError) in
            try run(view, mode: mode, collect: true)
        }
    }

    /// Whether an instance is valid, stopping at the first failure (faster than ``validate(_:mode:)``).
    ///
    /// - Throws: ``CodexSchemaError`` with `schema_work_limit_exceeded` when the work bound is hit.
    public func isValid(_ instance: JSONValue, mode: JSONValidationMode = .full) throws(CodexSchemaError) -> Bool {
        try JSONTape(encoding: instance).withView(source: UnsafeBufferPointer(start: nil, count: 0)) { view throws(CodexSchemaError) in
            try run(view, mode: mode, collect: false).isValid
        }
    }

    /// Validates a parsed document and returns every failure.
    ///
    /// - Throws: ``CodexSchemaError`` with `schema_work_limit_exceeded` when the work bound is hit.
    public func validate(_ document: JSONDocument, mode: JSONValidationMode = .full) throws(CodexSchemaError) -> JSONValidationResult {
        try document.withView { view throws(CodexSchemaError) in try run(view, mode: mode, collect: true) }
    }

    /// Whether a parsed document is valid, stopping at the first failure.
    ///
    /// - Throws: ``CodexSchemaError`` with `schema_work_limit_exceeded` when the work bound is hit.
    public func isValid(_ document: JSONDocument, mode: JSONValidationMode = .full) throws(CodexSchemaError) -> Bool {
        try document.withView { view throws(CodexSchemaError) in try run(view, mode: mode, collect: false) }.isValid
    }

    /// Parses JSON text and validates it without building a ``JSONValue``: the fastest path from model
    /// output to a verdict.
    ///
    /// - Parameters:
    ///   - jsonBytes: UTF-8 JSON text.
    ///   - options: Parsing limits.
    ///   - mode: Full or partial validation.
    /// - Returns: The result, with every failure.
    /// - Throws: ``CodexSchemaError`` with a `json_*` code for malformed text, or
    ///   `schema_work_limit_exceeded`.
    public func validate(
        jsonBytes: some Collection<UInt8>, options: JSONParsingOptions = .init(), mode: JSONValidationMode = .full
    ) throws(CodexSchemaError) -> JSONValidationResult {
        try withTape(jsonBytes, options: options) { view throws(CodexSchemaError) in try run(view, mode: mode, collect: true) }
    }

    /// Parses JSON text and returns whether it is valid, stopping at the first failure.
    ///
    /// - Throws: ``CodexSchemaError`` with a `json_*` code for malformed text, or
    ///   `schema_work_limit_exceeded`.
    public func isValid(
        jsonBytes: some Collection<UInt8>, options: JSONParsingOptions = .init(), mode: JSONValidationMode = .full
    ) throws(CodexSchemaError) -> Bool {
        try withTape(jsonBytes, options: options) { view throws(CodexSchemaError) in try run(view, mode: mode, collect: false) }.isValid
    }

    /// The number of compiled subschema positions.
    public var nodeCount: Int { program.nodes.count }

    private func run(_ view: JSONTapeView, mode: JSONValidationMode, collect: Bool) throws(CodexSchemaError) -> JSONValidationResult {
        try SchemaEvaluator.with(program, view) { evaluator throws(CodexSchemaError) in
            if collect {
                _ = try evaluator.evaluate(0, 0, ReportMode.self, relaxed: mode == .partial)
                return JSONValidationResult(errors: evaluator.errors)
            }
            let valid = try evaluator.evaluate(0, 0, VerdictMode.self, relaxed: mode == .partial)
            return valid ? JSONValidationResult(errors: []) : JSONValidationResult.invalidVerdict
        }
    }

    private func withTape(
        _ bytes: some Collection<UInt8>, options: JSONParsingOptions,
        _ body: (JSONTapeView) throws(CodexSchemaError) -> JSONValidationResult
    ) throws(CodexSchemaError) -> JSONValidationResult {
        let outcome: Result<JSONValidationResult, CodexSchemaError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Self.parseAndRun(buffer, options, body)
        }
        if let outcome { return try outcome.get() }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { Self.parseAndRun($0, options, body) }.get()
    }

    private static func parseAndRun(
        _ buffer: UnsafeBufferPointer<UInt8>, _ options: JSONParsingOptions,
        _ body: (JSONTapeView) throws(CodexSchemaError) -> JSONValidationResult
    ) -> Result<JSONValidationResult, CodexSchemaError> {
        JSONTape.parse(buffer, options: options).flatMap { tape in
            do throws(CodexSchemaError) {
                return .success(try tape.withView(source: buffer) { view throws(CodexSchemaError) in try body(view) })
            } catch {
                return .failure(error)
            }
        }
    }
}
