/// Whether an evaluation records errors (``ReportMode``) or only needs the verdict (``VerdictMode``).
/// A type parameter rather than a flag, so each mode gets its own specialized code.
protocol EvaluationMode {
    static var collects: Bool { get }
}

/// Stop at the first failure; record nothing.
enum VerdictMode: EvaluationMode {
    static var collects: Bool { false }
}

/// Record every failing keyword.
enum ReportMode: EvaluationMode {
    static var collects: Bool { true }
}

/// Evaluates a tape instance against a ``SchemaProgram``.
///
/// With `collect` off an evaluation stops at the first failure and records nothing (the fast verdict);
/// with it on, every failing keyword is recorded with its instance and schema pointers. Subschemas of
/// `anyOf`, `oneOf` and `not` are always evaluated as verdicts, and their applicator reports one error.
/// Everything it reads during a walk is a plain record behind an unsafe pointer: no reference counting.
struct SchemaEvaluator {
    enum PathComponent {
        /// The tape index of a member's key.
        case key(Int)
        case index(Int)
    }

    typealias Node = SchemaProgram.Node
    typealias Flags = SchemaProgram.NodeFlags

    /// The program, borrowed for the evaluator's life (which ``with(_:_:_:)`` bounds): copying it would
    /// retain and release each of its tables once per validation.
    let programPointer: UnsafePointer<SchemaProgram>
    let nodes: UnsafePointer<Node>
    let rules: UnsafeBufferPointer<SchemaProgram.Rule>
    let children: UnsafeBufferPointer<Int32>
    let keyBytes: UnsafeBufferPointer<UInt8>
    let stringRanges: UnsafeBufferPointer<SchemaProgram.Span>
    let stringHeads: UnsafeBufferPointer<UInt64>
    let enumSlots: UnsafeBufferPointer<Int32>
    let numbers: UnsafeBufferPointer<JSONNumber>
    let numberKeys: UnsafeBufferPointer<SchemaProgram.NumberKey>
    /// The instance; a streaming validation points it at the tape as it is now before each evaluation.
    var tape: JSONTapeView
    /// Subschema evaluations so far (checked against ``JSONSchemaLimits/maximumValidationWork``); a
    /// streaming validation carries it from one value to the next.
    var work = 0
    /// The current chain of nested evaluations (checked against the evaluation depth limit).
    var depth = 0
    var path: [PathComponent] = []
    /// The reported failures (at most ``errorLimit``).
    var errors: [JSONValidationError] = []
    /// Every failure found, reported or not.
    var errorCount = 0
    /// How many failures may still be reported.
    var errorLimit = Int.max

    /// The program being evaluated (read in place through ``programPointer``).
    var program: SchemaProgram {
        unsafeAddress { programPointer }
    }

    // MARK: - Entry

    /// Evaluates the subschema `nodeIndex` against the instance value at `at`.
    mutating func evaluate<Mode: EvaluationMode>(
        _ nodeIndex: Int32, _ at: Int, _ mode: Mode.Type, relaxed: Bool
    ) throws(CodexSchemaError) -> Bool {
        let collect = Mode.collects
        try countWork(nodeIndex)
        let node = nodes + Int(nodeIndex)
        if node.pointee.constant >= 0 {
            if node.pointee.constant == 0, collect { record(nodeIndex, "false", "no value is allowed here") }
            return node.pointee.constant == 1
        }
        depth += 1
        defer { depth -= 1 }
        try checkDepth(nodeIndex)
        let flags = node.pointee.flags
        // A node that is only a `$ref` is its target (it records nothing of its own).
        if flags & Flags.refOnly != 0 { return try evaluate(node.pointee.ref, at, mode, relaxed: relaxed) }

        // Type, enum and const, then the keywords of the instance's type, then the applicators.
        var valid = try evaluateScalarKeywords(nodeIndex, node, at, mode, relaxed: relaxed)
        if !valid, !collect { return false }
        switch tape.kind(at) {
        case .object where flags & Flags.checksObjects != 0:
            if try !evaluateObject(nodeIndex, node, at, mode, relaxed: relaxed) {
                guard collect else { return false }
                valid = false
            }
        case .array where flags & Flags.checksArrays != 0:
            if try !evaluateArray(nodeIndex, node, at, mode, relaxed: relaxed) {
                guard collect else { return false }
                valid = false
            }
        default:
            break
        }

        if flags & Flags.hasApplicators != 0, try !evaluateApplicators(nodeIndex, node, at, mode, relaxed: relaxed) {
            guard collect else { return false }
            valid = false
        }
        return valid
    }

    /// Whether ``evaluateLeaf(_:_:_:relaxed:)`` may stand in for ``evaluate(_:_:_:relaxed:)``: the value
    /// is a scalar and the schema has no applicators, so only the scalar keywords can apply.
    @inline(__always)
    private func isLeaf(_ nodeIndex: Int32, _ at: Int) -> Bool {
        let kind = tape.kind(at)
        return kind != .object && kind != .array && nodes[Int(nodeIndex)].flags & Flags.hasApplicators == 0
    }

    /// ``evaluate(_:_:_:relaxed:)`` for a leaf (see ``isLeaf(_:_:)``), inlined into the member and element
    /// loops: the same work and depth accounting and the same checks in the same order, without a call.
    @inline(__always)
    private mutating func evaluateLeaf<Mode: EvaluationMode>(
        _ nodeIndex: Int32, _ at: Int, _ mode: Mode.Type, relaxed: Bool
    ) throws(CodexSchemaError) -> Bool {
        try countWork(nodeIndex)
        let node = nodes + Int(nodeIndex)
        if node.pointee.constant >= 0 {
            if node.pointee.constant == 0, Mode.collects { record(nodeIndex, "false", "no value is allowed here") }
            return node.pointee.constant == 1
        }
        depth += 1
        defer { depth -= 1 }
        try checkDepth(nodeIndex)
        return try evaluateScalarKeywords(nodeIndex, node, at, mode, relaxed: relaxed)
    }

    /// Counts one subschema evaluation against the work limit.
    @inline(__always)
    private mutating func countWork(_ nodeIndex: Int32) throws(CodexSchemaError) {
        work += 1
        if work > program.limits.maximumValidationWork {
            throw CodexSchemaError(
                code: .schemaWorkLimitExceeded,
                message: "validation needed more than \(program.limits.maximumValidationWork) subschema evaluations",
                schemaPointer: program.pointers[Int(nodeIndex)]
            )
        }
    }

    /// Checks the evaluation depth (after it was raised for `nodeIndex`).
    @inline(__always)
    private func checkDepth(_ nodeIndex: Int32) throws(CodexSchemaError) {
        if depth > program.limits.maximumEvaluationDepth {
            throw CodexSchemaError(
                code: .schemaWorkLimitExceeded,
                message: "validation nested deeper than \(program.limits.maximumEvaluationDepth) subschema evaluations",
                schemaPointer: program.pointers[Int(nodeIndex)]
            )
        }
    }

    /// `type`, `enum` and `const`, then the string or number keywords when the value is one. In verdict
    /// mode it stops at the first failure.
    @inline(__always)
    private mutating func evaluateScalarKeywords<Mode: EvaluationMode>(
        _ nodeIndex: Int32, _ node: UnsafePointer<Node>, _ at: Int, _ mode: Mode.Type, relaxed: Bool
    ) throws(CodexSchemaError) -> Bool {
        let collect = Mode.collects
        var valid = true
        let flags = node.pointee.flags
        let kind = tape.kind(at)
        if flags & Flags.hasType != 0, !matches(node.pointee.typeMask, at) {
            guard collect else { return false }
            valid = false
            let found: String
            switch kind {
            case .null: found = "null"
            case .false, .true: found = "boolean"
            case .integer: found = "integer"
            case .number: found = tape.number(at).isInteger ? "integer" : "number"
            case .string: found = "string"
            case .array: found = "array"
            case .object: found = "object"
            }
            record(nodeIndex, "type", "expected \(SchemaProgram.typeNames(node.pointee.typeMask)), found \(found)")
        }
        if flags & Flags.hasEnum != 0, !enumContains(node, at) {
            guard collect else { return false }
            valid = false
            record(nodeIndex, "enum", "value is not one of the \(node.pointee.enumSpan.count) allowed values")
        }
        if flags & Flags.hasConst != 0, !tape.equals(at, program.values[Int(node.pointee.constIndex)]) {
            guard collect else { return false }
            valid = false
            record(nodeIndex, "const", "value is not the required constant")
        }
        switch kind {
        case .string where flags & Flags.checksStrings != 0:
            if !evaluateString(nodeIndex, node, at, mode, relaxed: relaxed) {
                guard collect else { return false }
                valid = false
            }
        case .integer, .number:
            if flags & Flags.checksNumbers != 0, try !evaluateNumber(nodeIndex, node, at, mode) {
                guard collect else { return false }
                valid = false
            }
        default:
            break
        }
        return valid
    }

    // MARK: - Keywords by instance type

    private mutating func evaluateObject<Mode: EvaluationMode>(
        _ nodeIndex: Int32, _ node: UnsafePointer<Node>, _ at: Int, _ mode: Mode.Type, relaxed: Bool
    ) throws(CodexSchemaError) -> Bool {
        let collect = Mode.collects
        var valid = true
        var requiredSeen: Int32 = 0
        var hint: Int32 = 0
        var extraKeys: [Int] = []
        let ruleSpan = node.pointee.rules
        let additional = node.pointee.additional
        let memberCount = tape.entries[at].count
        var key = at + 1
        for _ in 0..<memberCount {
            let value = key + 1
            let next = tape.next(value)
            defer { key = next }
            if let position = rulePosition(ruleSpan, key, hint: hint) {
                hint = position + 1
                let rule = rules[Int(ruleSpan.start + position)]
                if rule.isRequired { requiredSeen += 1 }
                if rule.schema >= 0 {
                    if collect { path.append(.key(key)) }
                    let memberValid = isLeaf(rule.schema, value)
                        ? try evaluateLeaf(rule.schema, value, mode, relaxed: relaxed)
                        : try evaluate(rule.schema, value, mode, relaxed: relaxed)
                    if collect { path.removeLast() }
                    if !memberValid {
                        guard collect else { return false }
                        valid = false
                    }
                    continue
                }
            }
            guard additional >= 0 else { continue }
            if nodes[Int(additional)].constant == 0 {
                guard collect else { return false }
                valid = false
                extraKeys.append(key)
                continue
            }
            if collect { path.append(.key(key)) }
            let memberValid = try evaluate(additional, value, mode, relaxed: relaxed)
            if collect { path.removeLast() }
            if !memberValid {
                guard collect else { return false }
                valid = false
            }
        }
        for key in extraKeys {
            path.append(.key(key))
            record(nodeIndex, "additionalProperties", "property is not allowed")
            path.removeLast()
        }
        if requiredSeen < node.pointee.requiredCount, !relaxed {
            guard collect else { return false }
            valid = false
            for position in 0..<ruleSpan.count where rules[Int(ruleSpan.start + position)].isRequired {
                if !objectHasKey(at, ruleSpan.start + position) {
                    record(nodeIndex, "required", "missing required property \"\(program.ruleKeys[Int(ruleSpan.start + position)])\"")
                }
            }
        }
        let count = Int(memberCount)
        if node.pointee.minProperties >= 0, !relaxed, count < node.pointee.minProperties {
            guard collect else { return false }
            valid = false
            record(nodeIndex, "minProperties", "object has fewer than \(node.pointee.minProperties) properties")
        }
        if node.pointee.maxProperties >= 0, count > node.pointee.maxProperties {
            guard collect else { return false }
            valid = false
            record(nodeIndex, "maxProperties", "object has more than \(node.pointee.maxProperties) properties")
        }
        return valid
    }

    private mutating func evaluateArray<Mode: EvaluationMode>(
        _ nodeIndex: Int32, _ node: UnsafePointer<Node>, _ at: Int, _ mode: Mode.Type, relaxed: Bool
    ) throws(CodexSchemaError) -> Bool {
        let collect = Mode.collects
        var valid = true
        let count = Int(tape.entries[at].count)
        if node.pointee.minItems >= 0, !relaxed, count < node.pointee.minItems {
            guard collect else { return false }
            valid = false
            record(nodeIndex, "minItems", "array has fewer than \(node.pointee.minItems) items")
        }
        if node.pointee.maxItems >= 0, count > node.pointee.maxItems {
            guard collect else { return false }
            valid = false
            record(nodeIndex, "maxItems", "array has more than \(node.pointee.maxItems) items")
        }
        if node.pointee.has(Flags.uniqueItems), !tape.elementsAreUnique(at) {
            guard collect else { return false }
            valid = false
            record(nodeIndex, "uniqueItems", "array items are not unique")
        }
        let items = node.pointee.items
        if items >= 0 {
            var element = at + 1
            for position in 0..<count {
                if collect { path.append(.index(position)) }
                let elementValid = isLeaf(items, element)
                    ? try evaluateLeaf(items, element, mode, relaxed: relaxed)
                    : try evaluate(items, element, mode, relaxed: relaxed)
                if collect { path.removeLast() }
                if !elementValid {
                    guard collect else { return false }
                    valid = false
                }
                element = tape.next(element)
            }
        }
        return valid
    }

    private mutating func evaluateString<Mode: EvaluationMode>(
        _ nodeIndex: Int32, _ node: UnsafePointer<Node>, _ at: Int, _ mode: Mode.Type, relaxed: Bool
    ) -> Bool {
        let collect = Mode.collects
        var valid = true
        // Lengths are in Unicode scalars; UTF-8 byte counts bound them (scalars ≤ bytes ≤ 4 × scalars).
        let bytes = Int(tape.entries[at].count)
        let maximum = node.pointee.maxLength
        if maximum >= 0, bytes > maximum, tape.scalarCount(at) > maximum {
            guard collect else { return false }
            valid = false
            record(nodeIndex, "maxLength", "string is longer than \(maximum) characters")
        }
        let minimum = node.pointee.minLength
        if minimum >= 0, !relaxed, (bytes + 3) / 4 < minimum, tape.scalarCount(at) < minimum {
            guard collect else { return false }
            valid = false
            record(nodeIndex, "minLength", "string is shorter than \(minimum) characters")
        }
        return valid
    }

    private mutating func evaluateNumber<Mode: EvaluationMode>(
        _ nodeIndex: Int32, _ node: UnsafePointer<Node>, _ at: Int, _ mode: Mode.Type
    ) throws(CodexSchemaError) -> Bool {
        let collect = Mode.collects
        var valid = true
        // The instance as a Double, once (bounds compare it first; see ``compareNumber(_:_:_:)``).
        let entry = tape.entries[at]
        let value = entry.kind == .integer ? Double(entry.payload) : tape.numbers[Int(entry.payload)].doubleValue
        if node.pointee.minimum >= 0, compareNumber(at, value, node.pointee.minimum) < 0 {
            guard collect else { return false }
            valid = false
            record(nodeIndex, "minimum", "number is below the minimum \(numbers[Int(node.pointee.minimum)])")
        }
        if node.pointee.maximum >= 0, compareNumber(at, value, node.pointee.maximum) > 0 {
            guard collect else { return false }
            valid = false
            record(nodeIndex, "maximum", "number is above the maximum \(numbers[Int(node.pointee.maximum)])")
        }
        if node.pointee.exclusiveMinimum >= 0, compareNumber(at, value, node.pointee.exclusiveMinimum) <= 0 {
            guard collect else { return false }
            valid = false
            record(nodeIndex, "exclusiveMinimum", "number is not above \(numbers[Int(node.pointee.exclusiveMinimum)])")
        }
        if node.pointee.exclusiveMaximum >= 0, compareNumber(at, value, node.pointee.exclusiveMaximum) >= 0 {
            guard collect else { return false }
            valid = false
            record(nodeIndex, "exclusiveMaximum", "number is not below \(numbers[Int(node.pointee.exclusiveMaximum)])")
        }
        if node.pointee.multipleOf >= 0 {
            let divisor = numbers[Int(node.pointee.multipleOf)]
            let step = numberKeys[Int(node.pointee.multipleOf)]
            // Two integers: the remainder (what `isMultiple(of:)` computes for them, without the call).
            let fast: Bool? = entry.kind == .integer && step.isInteger && step.integer > 0 ? entry.payload % step.integer == 0 : nil
            guard let isMultiple = fast ?? tape.number(at).isMultiple(of: divisor) else {
                throw CodexSchemaError(
                    code: .schemaWorkLimitExceeded,
                    message: "multipleOf on numbers this long exceeds the work bound",
                    schemaPointer: program.pointers[Int(nodeIndex)] + "/multipleOf"
                )
            }
            if !isMultiple {
                guard collect else { return false }
                valid = false
                record(nodeIndex, "multipleOf", "number is not a multiple of \(divisor)")
            }
        }
        return valid
    }

    // MARK: - Applicators

    private mutating func evaluateApplicators<Mode: EvaluationMode>(
        _ nodeIndex: Int32, _ node: UnsafePointer<Node>, _ at: Int, _ mode: Mode.Type, relaxed: Bool
    ) throws(CodexSchemaError) -> Bool {
        let collect = Mode.collects
        var valid = true
        let ref = node.pointee.ref
        if ref >= 0, try !evaluate(ref, at, mode, relaxed: relaxed) {
            guard collect else { return false }
            valid = false
        }
        let allOf = node.pointee.allOf
        for position in 0..<allOf.count where try !evaluate(children[Int(allOf.start + position)], at, mode, relaxed: relaxed) {
            guard collect else { return false }
            valid = false
        }
        let anyOf = node.pointee.anyOf
        if anyOf.count > 0 {
            var matched = false
            for position in 0..<anyOf.count where try evaluate(children[Int(anyOf.start + position)], at, VerdictMode.self, relaxed: relaxed) {
                matched = true
                break
            }
            if !matched {
                guard collect else { return false }
                valid = false
                record(nodeIndex, "anyOf", "value matches none of the \(anyOf.count) subschemas")
            }
        }
        let oneOf = node.pointee.oneOf
        if oneOf.count > 0 {
            var matches = 0
            for position in 0..<oneOf.count where try evaluate(children[Int(oneOf.start + position)], at, VerdictMode.self, relaxed: relaxed) {
                matches += 1
                if relaxed || matches > 1 { break }
            }
            if matches == 0 || (matches > 1 && !relaxed) {
                guard collect else { return false }
                valid = false
                record(
                    nodeIndex,
                    "oneOf",
                    matches == 0
                        ? "value matches none of the \(oneOf.count) subschemas"
                        : "value matches more than one of the \(oneOf.count) subschemas"
                )
            }
        }
        let negated = node.pointee.not
        if negated >= 0, try evaluate(negated, at, VerdictMode.self, relaxed: false) {
            guard collect else { return false }
            valid = false
            record(nodeIndex, "not", "value matches a schema it must not match")
        }
        return valid
    }
}
