/// Validates a document while it is parsed, so memory follows the largest value a keyword needs whole,
/// not the document.
///
/// A container whose schema checks it only member by member or element by element (`properties`,
/// `additionalProperties`, `required`, `items`, the size bounds, `type`, a `true` or `false` schema, or
/// no schema at all) is *streamed*: each member or element is validated as soon as it is complete and
/// then cut off the tape. A value whose schema needs it whole (`enum`, `const`, `uniqueItems`, `anyOf`,
/// `oneOf`, `allOf`, `not`, `$ref`) is kept on the tape until it is complete and evaluated by the
/// ordinary ``SchemaEvaluator``. The result is the same, error for error and in the same order, as
/// parsing first and evaluating the whole tape: keyword order is preserved (array size errors are
/// placed before element errors), work and depth are counted identically, and a work-limit failure or a
/// verdict is only final once the rest of the document has parsed (a syntax error later in the text
/// still wins, as it does when the whole text is parsed first).
struct SchemaStreamingValidator<Mode: EvaluationMode>: JSONTapeParseObserver {
    static var isActive: Bool { true }

    /// The schema a value is checked against: none (anything goes), or a compiled node.
    enum Schema {
        case none
        case node(Int32)
    }

    /// One step of a pointer to the value being parsed.
    enum Component {
        case key(String)
        case index(Int)
    }

    /// An open container.
    struct Frame {
        let isObject: Bool
        /// The container's schema; for a kept frame the schema of the kept value (at its root frame).
        let schema: Schema
        /// Inside (or at the root of) a value kept whole: nothing below it streams.
        let kept: Bool
        /// Where the container's entry starts on the tape.
        let mark: JSONTape.Mark
        /// The errors reported when it opened (array size errors are inserted here).
        let errorsAtOpen: Int
        /// Whether a work-limit failure had already happened when it opened.
        var workFailedAtOpen = false
        var count = 0
        /// The schema and pointer step of the member or element being parsed.
        var childSchema: Schema = .none
        var childComponent: Component = .index(0)
        /// Streamed objects: the keys seen (duplicates are refused, as the parser does for kept objects),
        /// the first duplicate's offset, which rules were seen, and the keys `additionalProperties: false`
        /// refuses (reported when the object closes, after its members, as the evaluator does).
        var keys = KeySet()
        var firstDuplicateOffset: Int?
        /// Streamed arrays: the schema of every element.
        var itemsSchema: Schema = .none
        var rulesSeen = RuleSet()
        var refusedKeys: [String] = []
    }

    let program: SchemaProgram
    let source: UnsafeBufferPointer<UInt8>
    let relaxed: Bool
    /// One evaluator for the whole document (set up once: creating one per value would copy the program
    /// each time), valid while ``run(_:_:parser:)`` runs.
    private let evaluator: UnsafeMutablePointer<SchemaEvaluator>
    private var frames: [Frame] = []
    private var pendingMark = JSONTape.Mark(entries: 0, arena: 0, numbers: 0)
    /// The container that closed last: its entry, and whether it was streamed (its checks are done).
    private var lastClosed: (entry: Int, streamed: Bool, schema: Schema, mark: JSONTape.Mark)?
    private(set) var errors: [JSONValidationError] = []
    private(set) var errorCount = 0
    private var work = 0
    /// Evaluations nested now (streamed frames with an object schema).
    private var depth = 0
    /// A verdict-mode failure or a work-limit error: evaluation stops, parsing goes on.
    private(set) var failedVerdict = false
    private(set) var workFailure: CodexSchemaError?

    private init(program: SchemaProgram, source: UnsafeBufferPointer<UInt8>, relaxed: Bool, evaluator: UnsafeMutablePointer<SchemaEvaluator>) {
        self.program = program
        self.source = source
        self.relaxed = relaxed
        self.evaluator = evaluator
    }

    /// Parses `source` with `parser`, validating as it goes, and returns the finished observer.
    static func run(
        _ program: SchemaProgram, _ source: UnsafeBufferPointer<UInt8>, relaxed: Bool, parser: inout JSONTapeParser
    ) throws(CodexSchemaError) -> SchemaStreamingValidator {
        let empty = JSONTapeView(
            entries: UnsafeBufferPointer(start: nil, count: 0), arena: UnsafeBufferPointer(start: nil, count: 0), source: source,
            numbers: UnsafeBufferPointer(start: nil, count: 0)
        )
        var parse = parser
        let outcome: Result<SchemaStreamingValidator, CodexSchemaError> = try SchemaEvaluator.with(program, empty) { evaluator throws(CodexSchemaError) in
            withUnsafeMutablePointer(to: &evaluator) { pointer in
                var observer = SchemaStreamingValidator(program: program, source: source, relaxed: relaxed, evaluator: pointer)
                do throws(CodexSchemaError) {
                    _ = try parse.parseDocument(observing: &observer)
                    return .success(observer)
                } catch {
                    return .failure(error)
                }
            }
        }
        parser = parse
        return try outcome.get()
    }

    private var evaluating: Bool { !failedVerdict && workFailure == nil }

    // MARK: - Schema decisions

    private func node(_ index: Int32) -> SchemaProgram.Node { program.nodes[Int(index)] }

    /// Whether a container with this schema can be checked member by member.
    private func streams(_ schema: Schema) -> Bool {
        guard case .node(let index) = schema else { return true }
        let node = node(index)
        if node.constant >= 0 { return true }
        let whole = SchemaProgram.NodeFlags.hasEnum | SchemaProgram.NodeFlags.hasConst | SchemaProgram.NodeFlags.hasApplicators
            | SchemaProgram.NodeFlags.uniqueItems
        return node.flags & whole == 0
    }

    // MARK: - Observer

    mutating func valueWillStart(_ mark: JSONTape.Mark) {
        pendingMark = mark
        guard let last = frames.indices.last, !frames[last].kept, !frames[last].isObject else { return }
        // The next element of a streamed array: its schema is `items` when the array's checks apply.
        frames[last].childComponent = .index(frames[last].count)
        frames[last].childSchema = frames[last].itemsSchema
    }

    mutating func containerDidOpen(isObject: Bool, entry: Int, depth _: Int) throws(CodexSchemaError) {
        if frames.last?.kept == true {
            frames.append(Frame(isObject: isObject, schema: .none, kept: true, mark: pendingMark, errorsAtOpen: errors.count))
            return
        }
        let schema = frames.last?.childSchema ?? .node(0)
        guard streams(schema) else {
            frames.append(Frame(isObject: isObject, schema: schema, kept: true, mark: pendingMark, errorsAtOpen: errors.count))
            return
        }
        var frame = Frame(isObject: isObject, schema: schema, kept: false, mark: pendingMark, errorsAtOpen: errors.count)
        frame.workFailedAtOpen = workFailure != nil
        if case .node(let index) = schema {
            let node = node(index)
            countWork(index)
            if node.constant == 0 {
                record(index, "false", "no value is allowed here")
            } else if node.constant < 0 {
                depth += 1
                if depth > program.limits.maximumEvaluationDepth {
                    failWork(CodexSchemaError(
                        code: .schemaWorkLimitExceeded,
                        message: "validation nested deeper than \(program.limits.maximumEvaluationDepth) subschema evaluations",
                        schemaPointer: program.pointers[Int(index)]
                    ))
                }
                let bit = isObject ? SchemaProgram.TypeBit.object : SchemaProgram.TypeBit.array
                if node.flags & SchemaProgram.NodeFlags.hasType != 0, node.typeMask & bit == 0 {
                    record(index, "type", "expected \(SchemaProgram.typeNames(node.typeMask)), found \(isObject ? "object" : "array")")
                }
                if isObject, node.flags & SchemaProgram.NodeFlags.checksObjects != 0 {
                    frame.rulesSeen = RuleSet(count: Int(node.rules.count))
                }
                if !isObject, node.flags & SchemaProgram.NodeFlags.checksArrays != 0, node.items >= 0 { frame.itemsSchema = .node(node.items) }
            }
        }
        frames.append(frame)
    }

    mutating func keyDidParse(entry: Int, offset: Int, tape: inout JSONTape) throws(CodexSchemaError) -> JSONTape.Mark? {
        guard let last = frames.indices.last, !frames[last].kept else { return nil }
        let key = tape.withView(source: source) { $0.string(entry) }
        if !frames[last].keys.insert(key), frames[last].firstDuplicateOffset == nil { frames[last].firstDuplicateOffset = offset }
        frames[last].childComponent = .key(key)
        frames[last].childSchema = .none
        if case .node(let index) = frames[last].schema {
            let node = node(index)
            if node.constant < 0, node.flags & SchemaProgram.NodeFlags.checksObjects != 0 {
                var matched = false
                if let position = rulePosition(node.rules, key) {
                    let rule = program.rules[Int(node.rules.start) + position]
                    frames[last].rulesSeen.insert(position)
                    if rule.schema >= 0 {
                        frames[last].childSchema = .node(rule.schema)
                        matched = true
                    }
                }
                if !matched, node.additional >= 0 {
                    if program.nodes[Int(node.additional)].constant == 0 {
                        // Refused: reported when the object closes, after its members, as the evaluator does.
                        if Mode.collects { frames[last].refusedKeys.append(key) } else if evaluating { failedVerdict = true }
                    } else {
                        frames[last].childSchema = .node(node.additional)
                    }
                }
            }
        }
        let keyEntry = tape.entries[entry]
        let arena = keyEntry.flags & JSONTape.Flags.inArena != 0 ? Int(keyEntry.payload) : tape.arena.count
        return JSONTape.Mark(entries: entry, arena: arena, numbers: tape.numbers.count)
    }

    mutating func containerWillClose(entry: Int, count: UInt32, tape: inout JSONTape) throws(CodexSchemaError) -> Bool {
        guard let frame = frames.popLast() else { return false }
        if frame.kept {
            lastClosed = (entry, false, frame.schema, frame.mark)
            return false
        }
        lastClosed = (entry, true, frame.schema, frame.mark)
        if case .node(let index) = frame.schema, node(index).constant < 0 {
            closeChecks(frame, index, count: Int(count))
            depth -= 1
        }
        if let offset = frame.firstDuplicateOffset {
            throw CodexSchemaError(code: .jsonDuplicateKey, message: "object has a duplicate key", byteOffset: offset)
        }
        return frame.isObject
    }

    mutating func valueDidComplete(entry: Int, depth _: Int, tape: inout JSONTape) throws(CodexSchemaError) -> JSONTape.Mark? {
        if frames.last?.kept == true { return nil }
        let schema: Schema
        let mark: JSONTape.Mark
        let streamed: Bool
        if let closed = lastClosed, closed.entry == entry {
            (schema, mark, streamed) = (closed.schema, closed.mark, closed.streamed)
            lastClosed = nil
        } else {
            (schema, mark, streamed) = (frames.last?.childSchema ?? .node(0), pendingMark, false)
        }
        if !streamed, case .node(let index) = schema, evaluating { try evaluate(index, at: entry, tape: tape) }
        guard !frames.isEmpty else { return nil }
        frames[frames.count - 1].count += 1
        return mark
    }

    // MARK: - Checks

    /// The checks a streamed container's keywords make once all its members or elements are known, in
    /// the evaluator's order.
    private mutating func closeChecks(_ frame: Frame, _ index: Int32, count: Int) {
        let node = node(index)
        if frame.isObject {
            guard node.flags & SchemaProgram.NodeFlags.checksObjects != 0 else { return }
            for key in frame.refusedKeys { record(index, "additionalProperties", "property is not allowed", extra: .key(key)) }
            if !relaxed {
                for position in 0..<Int(node.rules.count) where program.rules[Int(node.rules.start) + position].isRequired && !frame.rulesSeen.contains(position) {
                    record(index, "required", reportsMore ? "missing required property \"\(program.ruleKeys[Int(node.rules.start) + position])\"" : "")
                }
            }
            if node.minProperties >= 0, !relaxed, count < node.minProperties {
                record(index, "minProperties", "object has fewer than \(node.minProperties) properties")
            }
            if node.maxProperties >= 0, count > node.maxProperties {
                record(index, "maxProperties", "object has more than \(node.maxProperties) properties")
            }
            return
        }
        guard node.flags & SchemaProgram.NodeFlags.checksArrays != 0 else { return }
        let tooFew = node.minItems >= 0 && !relaxed && count < node.minItems
        let tooMany = node.maxItems >= 0 && count > node.maxItems
        // For a verdict the evaluator stops at a size failure before touching the elements: a work limit
        // the elements hit here was never reached there.
        if !Mode.collects, tooFew || tooMany, !frame.workFailedAtOpen, workFailure != nil {
            workFailure = nil
            failedVerdict = true
            return
        }
        // The evaluator checks an array's size before its elements: these errors go before theirs.
        var insert = frame.errorsAtOpen
        if tooFew { record(index, "minItems", "array has fewer than \(node.minItems) items", at: &insert) }
        if tooMany { record(index, "maxItems", "array has more than \(node.maxItems) items", at: &insert) }
    }

    /// Evaluates the complete value at `entry` against `index` with the ordinary evaluator.
    private mutating func evaluate(_ index: Int32, at entry: Int, tape: JSONTape) throws(CodexSchemaError) {
        let evaluator = self.evaluator
        evaluator.pointee.work = work
        evaluator.pointee.depth = depth
        evaluator.pointee.errors.removeAll(keepingCapacity: true)
        evaluator.pointee.errorCount = 0
        evaluator.pointee.errorLimit = max(0, program.limits.maximumReportedErrors - errors.count)
        let relaxed = self.relaxed
        let valid: Bool
        do throws(CodexSchemaError) {
            valid = try tape.withView(source: source) { view throws(CodexSchemaError) in
                evaluator.pointee.tape = view
                return try evaluator.pointee.evaluate(index, entry, Mode.self, relaxed: relaxed)
            }
        } catch {
            // A work or depth bound: the error the whole-tape evaluation gives, once the text has parsed.
            failWork(error)
            return
        }
        work = evaluator.pointee.work
        if !valid, !Mode.collects { failedVerdict = true }
        errorCount += evaluator.pointee.errorCount
        guard !evaluator.pointee.errors.isEmpty else { return }
        let prefix = pointerPrefix()
        errors += evaluator.pointee.errors.map {
            JSONValidationError(instancePointer: prefix + $0.instancePointer, schemaPointer: $0.schemaPointer, keyword: $0.keyword, message: $0.message)
        }
    }

    private mutating func countWork(_ index: Int32) {
        work += 1
        if work > program.limits.maximumValidationWork {
            failWork(CodexSchemaError(
                code: .schemaWorkLimitExceeded,
                message: "validation needed more than \(program.limits.maximumValidationWork) subschema evaluations",
                schemaPointer: program.pointers[Int(index)]
            ))
        }
    }

    private mutating func failWork(_ error: CodexSchemaError) {
        if workFailure == nil, !failedVerdict { workFailure = error }
    }

    /// Records a failure at the container being checked (or at its member `extra`), appended, or at
    /// `position` (then advanced).
    private mutating func record(_ index: Int32, _ keyword: String, _ message: String, extra: Component? = nil) {
        var end = errors.count
        record(index, keyword, message, extra: extra, at: &end)
    }

    /// Whether a failure recorded now would still be reported (else it is only counted, and its message
    /// need not be built).
    private var reportsMore: Bool { errors.count < program.limits.maximumReportedErrors }

    private mutating func record(_ index: Int32, _ keyword: String, _ message: String, extra: Component? = nil, at position: inout Int) {
        guard evaluating else { return }
        guard Mode.collects else {
            failedVerdict = true
            return
        }
        errorCount += 1
        let limit = program.limits.maximumReportedErrors
        guard position < limit else { return }
        var pointer = pointerPrefix()
        if let extra { pointer += "/" + Self.token(extra) }
        let base = program.pointers[Int(index)]
        let error = JSONValidationError(
            instancePointer: pointer, schemaPointer: keyword == "false" ? base : base + "/" + keyword, keyword: keyword, message: message
        )
        errors.insert(error, at: min(position, errors.count))
        position += 1
        if errors.count > limit { errors.removeLast(errors.count - limit) }
    }

    /// The pointer of the value being completed: one step per enclosing streamed container.
    private func pointerPrefix() -> String {
        var pointer = ""
        for frame in frames where !frame.kept {
            pointer += "/" + Self.token(frame.childComponent)
        }
        return pointer
    }

    private static func token(_ component: Component) -> String {
        switch component {
        case .key(let key): return JSONPointer.escape(key)
        case .index(let index): return String(index)
        }
    }

    private func rulePosition(_ span: SchemaProgram.Span, _ key: String) -> Int? {
        var key = key
        return program.bytes.withUnsafeBufferPointer { arena in
            key.withUTF8 { key in
                for position in 0..<Int(span.count) {
                    let rule = program.rules[Int(span.start) + position]
                    guard Int(rule.keyCount) == key.count else { continue }
                    let start = Int(rule.keyStart)
                    if JSONTapeView.equal(UnsafeBufferPointer(rebasing: arena[start..<(start + key.count)]), key) { return position }
                }
                return nil
            }
        }
    }
}

/// The keys of one streamed object, to refuse duplicates as the parser does: nothing allocated for one
/// key, a short list compared in place while the object is small, a hash set once it is not.
struct KeySet {
    private var first: String?
    private var few: [String] = []
    private var many: Set<String>?

    /// Adds `key`; `false` when it was there already.
    mutating func insert(_ key: String) -> Bool {
        guard let first else {
            self.first = key
            return true
        }
        if many != nil { return many?.insert(key).inserted ?? true }
        if key == first || few.contains(key) { return false }
        few.append(key)
        if few.count > 16 {
            many = Set(few + [first])
            few = []
        }
        return true
    }
}

/// Which rules (properties) of a streamed object were seen: bits for up to 64, an array beyond.
struct RuleSet {
    private var bits: UInt64 = 0
    private var overflow: [Bool] = []

    init() {}

    init(count: Int) {
        if count > 64 { overflow = Array(repeating: false, count: count) }
    }

    mutating func insert(_ position: Int) {
        if overflow.isEmpty { bits |= 1 << UInt64(position) } else { overflow[position] = true }
    }

    func contains(_ position: Int) -> Bool {
        overflow.isEmpty ? bits & (1 << UInt64(position)) != 0 : overflow[position]
    }
}
