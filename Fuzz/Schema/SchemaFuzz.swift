// libFuzzer target `schema`: the JSON Schema compiler and validator of CodexSchema. The harness is
// compiled together with the CodexSchema sources, so it drives SchemaCompiler and SchemaEvaluator
// directly and reads the evaluator's work counter.
//
// Input: <schema JSON> NUL <instance JSON>. The limits come from the input length (work bounds of 50,
// 500, 5,000 or 100,000 subschema evaluations; 64 levels of evaluation depth; 2,000 schema nodes), so
// the fuzzer meets the bounds often.
//
// Oracle: compilation gives a program or a typed CodexSchemaError, and the program never has more
// nodes than the node limit; for each mode (full, partial) and each evaluation (collecting, verdict),
// the evaluator's work counter never exceeds the bound when it finishes, and when it gives up it throws
// `schema_work_limit_exceeded` with the counter at most one past the bound; the public entry points
// (`validate` and `isValid` on a value, on a document and on text, which takes the streaming path for
// large text) all agree with the direct evaluation, failures and error codes included.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSchema(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let separator = input.firstIndex(of: 0) else { return 0 }
    let schemaBytes = Array(input[..<separator])
    let instanceBytes = Array(input[(separator + 1)...])
    let workBound = [50, 500, 5_000, 100_000][input.count % 4]
    let limits = JSONSchemaLimits(maximumSchemaDepth: 32, maximumSchemaNodes: 2_000, maximumValidationWork: workBound, maximumEvaluationDepth: 64, maximumReportedErrors: 50)
    let options = JSONParsingOptions(maximumDepth: 64)

    guard let schema = try? JSONValue(parsing: schemaBytes, options: options) else { return 0 }
    let program: SchemaProgram
    do throws(CodexSchemaError) {
        var compiler = SchemaCompiler(limits: limits)
        program = try compiler.compile(schema)
    } catch {
        return 0
    }
    check(program.nodes.count <= limits.maximumSchemaNodes, "the program has \(program.nodes.count) nodes, over the limit")
    let validator: JSONSchemaValidator
    do throws(CodexSchemaError) { validator = try JSONSchemaValidator(schema: schema, limits: limits) } catch {
        check(false, "the validator rejects a schema the compiler accepts: \(error.code)")
        return 0
    }
    guard let document = try? JSONDocument(parsing: instanceBytes, options: options) else { return 0 }
    let instance = document.value

    for mode in [JSONValidationMode.full, .partial] {
        // Direct evaluation, reading the work counter.
        let direct = evaluate(program, document, mode: mode, collect: true, bound: workBound)
        let verdict = evaluate(program, document, mode: mode, collect: false, bound: workBound)
        switch (direct, verdict) {
        case (.success(let result), .success(let quick)):
            check(result.isValid == quick.isValid, "the collecting and the verdict evaluation disagree")
        case (.failure(let error), .failure(let other)):
            check(error.code == other.code, "the two evaluations fail differently")
        case (.success, .failure), (.failure, .success):
            // A verdict stops at the first failure and so may finish under a bound the collecting pass
            // exceeds; the other way round the verdict needs more work than the full report: impossible.
            if case .failure = direct, case .success = verdict { break }
            check(false, "the verdict evaluation gives up where the collecting one finishes")
        }

        // The public entry points agree with the direct evaluation.
        func same(_ outcome: Result<JSONValidationResult, CodexSchemaError>, _ name: String) {
            switch (direct, outcome) {
            case (.success(let expected), .success(let actual)):
                check(expected == actual, "\(name) reports other failures than the direct evaluation")
            case (.failure(let expected), .failure(let actual)):
                check(expected.code == actual.code, "\(name) fails with \(actual.code), the direct evaluation with \(expected.code)")
            default:
                check(false, "\(name) and the direct evaluation disagree on giving up")
            }
        }
        same(Result { () throws(CodexSchemaError) in try validator.validate(instance, mode: mode) }, "validate(value)")
        same(Result { () throws(CodexSchemaError) in try validator.validate(document, mode: mode) }, "validate(document)")
        same(Result { () throws(CodexSchemaError) in try validator.validate(jsonBytes: instanceBytes, options: options, mode: mode) }, "validate(jsonBytes:)")
        same(instanceBytes.withUnsafeBufferPointer { buffer in
            Result { () throws(CodexSchemaError) in try validator.validateStreaming(buffer, options: options, mode: mode, collect: true) }
        }, "validateStreaming")
        if case .success(let quick) = verdict {
            if let valid = try? validator.isValid(document, mode: mode) { check(valid == quick.isValid, "isValid(document) disagrees") }
            let streamed = instanceBytes.withUnsafeBufferPointer { buffer in
                Result { () throws(CodexSchemaError) in try validator.validateStreaming(buffer, options: options, mode: mode, collect: false) }
            }
            if case .success(let result) = streamed { check(result.isValid == quick.isValid, "the streaming verdict disagrees") }
            else { check(false, "the streaming verdict gives up where the direct verdict finishes") }
        }
    }
    return 0
}

/// Evaluates with the evaluator itself and checks its work counter against the bound.
private func evaluate(
    _ program: SchemaProgram, _ document: JSONDocument, mode: JSONValidationMode, collect: Bool, bound: Int
) -> Result<JSONValidationResult, CodexSchemaError> {
    let outcome: Result<JSONValidationResult, CodexSchemaError>? = try? document.withView { view throws(CodexSchemaError) in
        try SchemaEvaluator.with(program, view) { evaluator throws(CodexSchemaError) in
            var result: Result<JSONValidationResult, CodexSchemaError>
            do throws(CodexSchemaError) {
                if collect {
                    _ = try evaluator.evaluate(0, 0, ReportMode.self, relaxed: mode == .partial)
                    result = .success(JSONValidationResult(errors: evaluator.errors, errorCount: evaluator.errorCount))
                } else {
                    let valid = try evaluator.evaluate(0, 0, VerdictMode.self, relaxed: mode == .partial)
                    result = .success(valid ? JSONValidationResult(errors: []) : .invalidVerdict)
                }
                check(evaluator.work <= bound, "the evaluation finished with work \(evaluator.work) over the bound \(bound)")
            } catch {
                check(error.code == .schemaWorkLimitExceeded, "the evaluation failed with \(error.code)")
                check(evaluator.work <= bound + 1, "the evaluation gave up with work \(evaluator.work), more than one past the bound \(bound)")
                result = .failure(error)
            }
            return result
        }
    }
    guard let outcome else {
        check(false, "the evaluation threw past its own handler")
        return .failure(CodexSchemaError(code: .schemaWorkLimitExceeded, message: "unreachable"))
    }
    return outcome
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        FileHandle.standardError.write(Data("schema oracle failed: \(message())\n".utf8))
        abort()
    }
}
