// libFuzzer target `structured`: the structured stream parser of CodexRuntime (StructuredStreamParser,
// with its marker search, payload buffer and partial JSON scanner). The harness is compiled together
// with the CodexRuntime sources, so the internal parser is called directly.
//
// Input: <schema JSON> NUL <assistant text>. A schema that does not compile is replaced by `true`.
// The text is fed whole, then again in deltas of 1 to 16 Unicode scalars (sizes from the input), and
// once one scalar at a time; one input in three gets a payload limit of 64 bytes.
//
// Oracle: nothing traps; every failure is an `AgentRuntimeError` coded `structured_output_invalid` or
// `structured_output_too_large`; for every split that ends without a failure, `visibleText` equals the
// concatenation of the `.text` outputs; for every split, the visible text, the committed payload (value and bytes) and the failure code equal the
// whole feed's (the documented split invariance); every partial snapshot passes `partial` validation,
// and when the payload commits, each snapshot's text without its closing brackets is a prefix of the
// committed text (a snapshot is a cut of the payload so far, closed); the committed value passes `full`
// validation.
import CodexCore
import CodexSchema
import Foundation

private struct Run {
    var visible = ""
    var texts = ""
    var committed: StructuredStreamCommit?
    var partials: [(JSONValue, [UInt8])] = []
    var failure: AgentRuntimeError.Code?
}

private func run(_ scalars: [Unicode.Scalar], validator: JSONSchemaValidator, limit: Int, sizes: (Int) -> Int) -> Run {
    var parser = StructuredStreamParser(formatName: "fuzz", validator: validator, maximumPayloadBytes: limit)
    var result = Run()
    func take(_ outputs: [StructuredStreamOutput]) {
        for output in outputs {
            switch output {
            case .text(let text): result.texts += text
            case .partial(let value, let bytes): result.partials.append((value, bytes))
            case .committed(let commit): check(result.committed == nil, "two commits"); result.committed = commit
            }
        }
    }
    var start = 0
    var step = 0
    do throws(AgentRuntimeError) {
        while start < scalars.count {
            let end = min(scalars.count, start + max(1, sizes(step)))
            step += 1
            var delta = ""
            delta.unicodeScalars.append(contentsOf: scalars[start..<end])
            take(try parser.feed(delta))
            start = end
        }
        take(try parser.finish())
    } catch {
        check(error.code == .structuredOutputInvalid || error.code == .structuredOutputTooLarge, "unexpected error code \(error.code)")
        result.failure = error.code
    }
    result.visible = parser.visibleText
    if result.failure == nil { check(parser.committed == result.committed, "committed differs from the .committed output") }
    return result
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStructured(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let separator = input.firstIndex(of: 0) else { return 0 }
    let schemaBytes = input[..<separator]
    let text = String(decoding: input[(separator + 1)...], as: UTF8.self)
    let scalars = Array(text.unicodeScalars)
    let limits = JSONSchemaLimits(maximumValidationWork: 200_000)
    let validator: JSONSchemaValidator
    if let schema = try? JSONValue(parsing: schemaBytes), let compiled = try? JSONSchemaValidator(schema: schema, limits: limits) {
        validator = compiled
    } else if let any = try? JSONSchemaValidator(schema: .bool(true), limits: limits) {
        validator = any
    } else {
        return 0
    }
    let limit = input.count % 3 == 0 ? 64 : CodexLimits.maximumStructuredPayloadBytes
    let sizes = input.prefix(8).map { Int($0 % 16) + 1 }

    let whole = run(scalars, validator: validator, limit: limit) { _ in scalars.count }
    let runs = [
        ("chunked", run(scalars, validator: validator, limit: limit) { sizes.isEmpty ? 1 : sizes[$0 % sizes.count] }),
        ("scalarwise", run(scalars, validator: validator, limit: limit) { _ in 1 }),
    ]
    for (name, current) in [("whole", whole)] + runs {
        // After a failure the outputs of the failing call are never returned, while `visibleText` already
        // holds the prose that call released; the rule is checked on streams that end without a failure.
        if current.failure == nil {
            check(current.visible == current.texts, "\(name): visibleText is not the concatenation of the .text outputs")
        }
        for (value, bytes) in current.partials {
            check((try? validator.isValid(value, mode: .partial)) != false, "\(name): a partial snapshot fails partial validation")
            check((try? JSONValue(parsing: bytes)) == value, "\(name): a partial snapshot's bytes do not parse to its value")
            if let commit = current.committed, current.failure == nil {
                var cut = bytes[...]
                while let last = cut.last, last == UInt8(ascii: "]") || last == UInt8(ascii: "}") || last == UInt8(ascii: " ") || last == UInt8(ascii: "\n") || last == UInt8(ascii: "\t") || last == UInt8(ascii: "\r") { cut.removeLast() }
                while let first = cut.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\n") || first == UInt8(ascii: "\t") || first == UInt8(ascii: "\r") { cut.removeFirst() }
                check(commit.bytes.starts(with: cut), "\(name): a partial snapshot is not a cut of the committed payload")
            }
        }
        if let commit = current.committed {
            check((try? validator.isValid(commit.value)) != false, "\(name): the committed value fails full validation")
        }
    }
    for (name, current) in runs {
        check(current.failure == whole.failure, "\(name): fails with \(String(describing: current.failure)), the whole feed with \(String(describing: whole.failure))")
        if whole.failure == nil {
            check(current.visible == whole.visible, "\(name): visible text differs from the whole feed")
            check(current.committed == whole.committed, "\(name): the committed payload differs from the whole feed")
        }
    }
    return 0
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        FileHandle.standardError.write(Data("structured oracle failed: \(message())\n".utf8))
        abort()
    }
}
