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
    /// Text over 8 MiB is validated while it is parsed: members and elements whose keywords can be checked
    /// one at a time are validated as they complete and dropped, so memory follows the largest value a
    /// keyword needs whole (for `enum`, `const`, `uniqueItems` or an applicator), not the document. The
    /// result is the same either way; smaller text takes the faster whole-tape path, whose memory (about
    /// 16 bytes per JSON value) stays bounded by the threshold.
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
        try withBytes(jsonBytes) { buffer throws(CodexSchemaError) in
            guard buffer.count > Self.streamingThreshold else {
                return try Self.parseAndRun(buffer, options) { view throws(CodexSchemaError) in try run(view, mode: mode, collect: true) }.get()
            }
            return try validateStreaming(buffer, options: options, mode: mode, collect: true)
        }
    }

    /// Parses JSON text and returns whether it is valid, stopping at the first failure.
    ///
    /// - Throws: ``CodexSchemaError`` with a `json_*` code for malformed text, or
    ///   `schema_work_limit_exceeded`.
    public func isValid(
        jsonBytes: some Collection<UInt8>, options: JSONParsingOptions = .init(), mode: JSONValidationMode = .full
    ) throws(CodexSchemaError) -> Bool {
        try withBytes(jsonBytes) { buffer throws(CodexSchemaError) in
            guard buffer.count > Self.streamingThreshold else {
                return try Self.parseAndRun(buffer, options) { view throws(CodexSchemaError) in try run(view, mode: mode, collect: false) }.get()
            }
            return try validateStreaming(buffer, options: options, mode: mode, collect: false)
        }.isValid
    }

    /// Inputs larger than this are validated while parsed (``validateStreaming(_:options:mode:collect:)``).
    static let streamingThreshold = 8 << 20

    /// Parses `buffer` and validates it as it goes (see ``validate(jsonBytes:options:mode:)``): the same
    /// result as parsing first and evaluating the whole tape.
    func validateStreaming(
        _ buffer: UnsafeBufferPointer<UInt8>, options: JSONParsingOptions, mode: JSONValidationMode, collect: Bool
    ) throws(CodexSchemaError) -> JSONValidationResult {
        guard buffer.count <= options.maximumBytes else {
            throw CodexSchemaError(
                code: .jsonSizeLimitExceeded, message: "input is larger than the limit of \(options.maximumBytes) bytes", byteOffset: options.maximumBytes
            )
        }
        var parser = JSONTapeParser(bytes: buffer, maximumDepth: options.maximumDepth)
        if collect {
            let observer = try SchemaStreamingValidator<ReportMode>.run(program, buffer, relaxed: mode == .partial, parser: &parser)
            if let failure = observer.workFailure { throw failure }
            return JSONValidationResult(errors: observer.errors, errorCount: observer.errorCount)
        }
        let observer = try SchemaStreamingValidator<VerdictMode>.run(program, buffer, relaxed: mode == .partial, parser: &parser)
        if let failure = observer.workFailure { throw failure }
        return observer.failedVerdict ? JSONValidationResult.invalidVerdict : JSONValidationResult(errors: [])
    }

    /// The number of compiled subschema positions.
    public var nodeCount: Int { program.nodes.count }

    private func run(_ view: JSONTapeView, mode: JSONValidationMode, collect: Bool) throws(CodexSchemaError) -> JSONValidationResult {
        try SchemaEvaluator.with(program, view) { evaluator throws(CodexSchemaError) in
            if collect {
                _ = try evaluator.evaluate(0, 0, ReportMode.self, relaxed: mode == .partial)
                return JSONValidationResult(errors: evaluator.errors, errorCount: evaluator.errorCount)
            }
            let valid = try evaluator.evaluate(0, 0, VerdictMode.self, relaxed: mode == .partial)
            return valid ? JSONValidationResult(errors: []) : JSONValidationResult.invalidVerdict
        }
    }

    private func withBytes(
        _ bytes: some Collection<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) throws(CodexSchemaError) -> JSONValidationResult
    ) throws(CodexSchemaError) -> JSONValidationResult {
        let outcome: Result<JSONValidationResult, CodexSchemaError>? = bytes.withContiguousStorageIfAvailable { buffer in
            do throws(CodexSchemaError) {
                return .success(try body(buffer))
            } catch {
                return .failure(error)
            }
        }
        if let outcome { return try outcome.get() }
        let copy = Array(bytes)
        let copied: Result<JSONValidationResult, CodexSchemaError> = copy.withUnsafeBufferPointer { buffer in
            do throws(CodexSchemaError) {
                return .success(try body(buffer))
            } catch {
                return .failure(error)
            }
        }
        return try copied.get()
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
