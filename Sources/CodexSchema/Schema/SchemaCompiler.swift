/// Compiles a raw schema document into a ``SchemaProgram``, enforcing the supported keyword subset.
///
/// Every schema position is visited once, in sorted key order. Unsupported keywords are collected
/// (their values are not searched further) and reported together; `$ref`s are resolved after the walk
/// against the positions compiled during it.
struct SchemaCompiler {
    static let annotations: Set<String> = [
        "$schema", "$id", "$comment", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly",
    ]
    static let assertions: Set<String> = [
        "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "oneOf", "allOf",
        "not", "$defs", "definitions", "$ref", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minLength", "maxLength", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties",
    ]
    static let typeBits: [String: UInt8] = [
        "null": SchemaProgram.TypeBit.null, "boolean": SchemaProgram.TypeBit.boolean, "object": SchemaProgram.TypeBit.object,
        "array": SchemaProgram.TypeBit.array, "number": SchemaProgram.TypeBit.number, "string": SchemaProgram.TypeBit.string,
        "integer": SchemaProgram.TypeBit.integer,
    ]

    /// What one schema object contributes before its node record is finalized.
    private struct Draft {
        var node = SchemaProgram.Node()
        var properties: [(String, Int32)] = []
        var required: [String] = []
        var allOf: [Int32] = []
        var anyOf: [Int32] = []
        var oneOf: [Int32] = []
        var reference: String?
    }

    private struct PendingReference {
        let node: Int32
        let reference: String
    }

    private let limits: JSONSchemaLimits
    private var program = SchemaProgram()
    private var nodesByPointer: [String: Int32] = [:]
    private var unsupported: [String] = []
    private var invalid: [CodexSchemaError] = []
    private var references: [PendingReference] = []
    private var visited = 0

    init(limits: JSONSchemaLimits) {
        self.limits = limits
        program.limits = limits
    }

    mutating func compile(_ document: JSONValue) throws(CodexSchemaError) -> SchemaProgram {
        _ = try compileSchema(document, pointer: "", depth: 0)
        if !unsupported.isEmpty {
            let first = unsupported[0]
            let keyword = JSONPointer.tokens(first)?.last ?? first
            throw CodexSchemaError(
                code: .unsupportedSchemaKeyword,
                message: "schema keyword \"\(keyword)\" is outside the supported subset"
                    + (unsupported.count > 1 ? " (and \(unsupported.count - 1) more)" : ""),
                schemaPointer: first,
                unsupportedLocations: unsupported
            )
        }
        if let first = invalid.first { throw first }
        for pending in references {
            program.nodes[Int(pending.node)].ref = try resolve(pending.reference, from: pending.node)
            program.nodes[Int(pending.node)].flags |= SchemaProgram.NodeFlags.hasApplicators
        }
        if !references.isEmpty { try refuseEndlessReferences() }
        program.finishLookups()
        return program
    }

    /// Refuses a `$ref` that leads back to its own schema through `$ref`, `allOf`, `anyOf`, `oneOf` and
    /// `not` alone: each of those applies a schema to the same instance, so evaluation would go round
    /// without end on any instance that reaches it (`{"$ref": "#"}` validates nothing). A way back
    /// through `properties`, `items` or `additionalProperties` is recursion into the instance, which
    /// ends with it, and stays allowed.
    private func refuseEndlessReferences() throws(CodexSchemaError) {
        let nodes = program.nodes
        func inPlace(_ index: Int) -> [Int32] {
            let node = nodes[index]
            var next: [Int32] = []
            if node.ref >= 0 { next.append(node.ref) }
            if node.not >= 0 { next.append(node.not) }
            for span in [node.allOf, node.anyOf, node.oneOf] where span.count > 0 {
                next.append(contentsOf: program.children[Int(span.start)..<Int(span.start + span.count)])
            }
            return next
        }
        // Depth-first, without recursion (a schema may nest thousands deep): 0 unseen, 1 on the path,
        // 2 done. An edge to a node on the path closes a loop.
        var state = [UInt8](repeating: 0, count: nodes.count)
        for start in nodes.indices where state[start] == 0 {
            var stack: [(node: Int, next: [Int32], position: Int)] = [(start, inPlace(start), 0)]
            state[start] = 1
            while let top = stack.last {
                guard top.position < top.next.count else {
                    state[top.node] = 2
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].position += 1
                let target = Int(top.next[top.position])
                if state[target] == 1 {
                    // The loop is the path from `target` on: name the first schema on it that goes on
                    // through its `$ref` (the first edge each schema lists, so taken when the position
                    // moved past it), not one whose `$ref` leads elsewhere.
                    let loop = stack.drop { $0.node != target }
                    let owner = loop.first { nodes[$0.node].ref >= 0 && $0.position == 1 }?.node ?? target
                    throw invalidSchema(
                        "$ref leads back to the same schema without reaching into the instance, so evaluation would never end",
                        at: program.pointers[owner] + "/$ref"
                    )
                }
                if state[target] == 0 {
                    state[target] = 1
                    stack.append((target, inPlace(target), 0))
                }
            }
        }
    }

    // MARK: - Walk

    private mutating func compileSchema(_ value: JSONValue, pointer: String, depth: Int) throws(CodexSchemaError) -> Int32 {
        guard depth <= limits.maximumSchemaDepth else {
            throw CodexSchemaError(
                code: .schemaDepthLimitExceeded,
                message: "schema nesting is deeper than the limit of \(limits.maximumSchemaDepth)",
                schemaPointer: pointer
            )
        }
        visited += 1
        guard visited <= limits.maximumSchemaNodes else {
            throw CodexSchemaError(
                code: .schemaNodeLimitExceeded,
                message: "schema has more than \(limits.maximumSchemaNodes) subschemas",
                schemaPointer: pointer
            )
        }
        let index = Int32(program.nodes.count)
        program.nodes.append(SchemaProgram.Node())
        program.pointers.append(pointer)
        nodesByPointer[pointer] = index
        var draft = Draft()
        switch value {
        case .bool(let flag):
            draft.node.constant = flag ? 1 : 0
        case .object(let members):
            for member in members {
                try apply(member.key, member.value, to: &draft, pointer: pointer, depth: depth)
            }
        default:
            invalid.append(invalidSchema("a schema must be an object or a Boolean", at: pointer))
        }
        program.nodes[Int(index)] = finalize(draft)
        if let reference = draft.reference {
            references.append(PendingReference(node: index, reference: reference))
        }
        return index
    }

    /// Lays out the draft's rules and subschema lists contiguously and sets the node's flags.
    private mutating func finalize(_ draft: Draft) -> SchemaProgram.Node {
        typealias Flags = SchemaProgram.NodeFlags
        var node = draft.node
        let required = Set(draft.required)
        let ruleStart = Int32(program.rules.count)
        var covered = Set<String>()
        func addRule(_ key: String, schema: Int32, isRequired: Bool) {
            let span = program.intern(key)
            program.rules.append(.init(keyStart: span.start, keyCount: span.count, schema: schema, isRequired: isRequired))
            program.ruleKeys.append(key)
            if isRequired { node.requiredCount += 1 }
            covered.insert(key)
        }
        for (key, schema) in draft.properties where !covered.contains(key) {
            addRule(key, schema: schema, isRequired: required.contains(key))
        }
        for key in draft.required where !covered.contains(key) {
            addRule(key, schema: -1, isRequired: true)
        }
        node.rules = .init(start: ruleStart, count: Int32(program.rules.count) - ruleStart)
        node.allOf = appendChildren(draft.allOf)
        node.anyOf = appendChildren(draft.anyOf)
        node.oneOf = appendChildren(draft.oneOf)

        if node.rules.count > 0 || node.additional >= 0 || node.minProperties >= 0 || node.maxProperties >= 0 {
            node.flags |= Flags.checksObjects
        }
        if node.items >= 0 || node.minItems >= 0 || node.maxItems >= 0 || node.has(Flags.uniqueItems) {
            node.flags |= Flags.checksArrays
        }
        if node.minLength >= 0 || node.maxLength >= 0 { node.flags |= Flags.checksStrings }
        if node.minimum >= 0 || node.maximum >= 0 || node.exclusiveMinimum >= 0 || node.exclusiveMaximum >= 0 || node.multipleOf >= 0 {
            node.flags |= Flags.checksNumbers
        }
        if node.allOf.count > 0 || node.anyOf.count > 0 || node.oneOf.count > 0 || node.not >= 0 {
            node.flags |= Flags.hasApplicators
        }
        return node
    }

    private mutating func appendChildren(_ list: [Int32]) -> SchemaProgram.Span {
        let start = Int32(program.children.count)
        program.children.append(contentsOf: list)
        return .init(start: start, count: Int32(list.count))
    }

    private mutating func apply(
        _ keyword: String, _ value: JSONValue, to draft: inout Draft, pointer: String, depth: Int
    ) throws(CodexSchemaError) {
        let location = pointer + "/" + JSONPointer.escape(keyword)
        if Self.annotations.contains(keyword) { return }
        guard Self.assertions.contains(keyword) else {
            unsupported.append(location)
            return
        }
        switch keyword {
        case "type": compileType(value, node: &draft.node, at: location)
        case "enum":
            guard case .array(let options) = value else { return invalid.append(invalidSchema("enum must be an array", at: location)) }
            draft.node.flags |= SchemaProgram.NodeFlags.hasEnum
            if options.allSatisfy({ $0.stringValue != nil }) {
                draft.node.flags |= SchemaProgram.NodeFlags.enumIsStrings
                draft.node.enumSpan = .init(start: Int32(program.stringRanges.count), count: Int32(options.count))
                for option in options { program.stringRanges.append(program.intern(option.stringValue ?? "")) }
            } else {
                draft.node.enumSpan = .init(start: Int32(program.values.count), count: Int32(options.count))
                program.values.append(contentsOf: options)
            }
        case "const":
            draft.node.flags |= SchemaProgram.NodeFlags.hasConst
            draft.node.constIndex = Int32(program.values.count)
            program.values.append(value)
        case "properties":
            guard case .object(let properties) = value else {
                return invalid.append(invalidSchema("properties must be an object", at: location))
            }
            for property in properties {
                let child = try compileSchema(property.value, pointer: location + "/" + JSONPointer.escape(property.key), depth: depth + 1)
                draft.properties.append((property.key, child))
            }
        case "required":
            guard case .array(let names) = value, names.allSatisfy({ $0.stringValue != nil }) else {
                return invalid.append(invalidSchema("required must be an array of strings", at: location))
            }
            draft.required = names.compactMap(\.stringValue)
        case "additionalProperties":
            draft.node.additional = try compileSchema(value, pointer: location, depth: depth + 1)
        case "items":
            if case .array = value { return unsupported.append(location) }
            draft.node.items = try compileSchema(value, pointer: location, depth: depth + 1)
        case "not":
            draft.node.not = try compileSchema(value, pointer: location, depth: depth + 1)
        case "allOf", "anyOf", "oneOf":
            guard case .array(let schemas) = value, !schemas.isEmpty else {
                return invalid.append(invalidSchema("\(keyword) must be a non-empty array of schemas", at: location))
            }
            var compiled: [Int32] = []
            for (index, schema) in schemas.enumerated() {
                compiled.append(try compileSchema(schema, pointer: location + "/\(index)", depth: depth + 1))
            }
            switch keyword {
            case "allOf": draft.allOf = compiled
            case "anyOf": draft.anyOf = compiled
            default: draft.oneOf = compiled
            }
        case "$defs", "definitions":
            guard case .object(let definitions) = value else {
                return invalid.append(invalidSchema("\(keyword) must be an object of schemas", at: location))
            }
            for definition in definitions {
                _ = try compileSchema(definition.value, pointer: location + "/" + JSONPointer.escape(definition.key), depth: depth + 1)
            }
        case "$ref":
            guard case .string(let reference) = value else {
                return invalid.append(invalidSchema("$ref must be a string", at: location))
            }
            guard reference == "#" || reference.hasPrefix("#/") else { return unsupported.append(location) }
            draft.reference = reference
        case "minimum": draft.node.minimum = number(value, at: location)
        case "maximum": draft.node.maximum = number(value, at: location)
        case "exclusiveMinimum": draft.node.exclusiveMinimum = number(value, at: location)
        case "exclusiveMaximum": draft.node.exclusiveMaximum = number(value, at: location)
        case "multipleOf":
            let index = number(value, at: location)
            if index >= 0 {
                let divisor = program.numbers[Int(index)]
                if divisor.isNegative || divisor.isZero {
                    invalid.append(invalidSchema("multipleOf must be greater than zero", at: location))
                } else {
                    draft.node.multipleOf = index
                }
            }
        case "minLength": draft.node.minLength = count(value, at: location)
        case "maxLength": draft.node.maxLength = count(value, at: location)
        case "minItems": draft.node.minItems = count(value, at: location)
        case "maxItems": draft.node.maxItems = count(value, at: location)
        case "minProperties": draft.node.minProperties = count(value, at: location)
        case "maxProperties": draft.node.maxProperties = count(value, at: location)
        case "uniqueItems":
            guard case .bool(let flag) = value else { return invalid.append(invalidSchema("uniqueItems must be a Boolean", at: location)) }
            if flag { draft.node.flags |= SchemaProgram.NodeFlags.uniqueItems }
        default:
            unsupported.append(location)
        }
    }

    private mutating func compileType(_ value: JSONValue, node: inout SchemaProgram.Node, at location: String) {
        let names: [String]
        switch value {
        case .string(let name): names = [name]
        case .array(let elements) where elements.allSatisfy({ $0.stringValue != nil }): names = elements.compactMap(\.stringValue)
        default: return invalid.append(invalidSchema("type must be a type name or an array of them", at: location))
        }
        var mask: UInt8 = 0
        for name in names {
            guard let bit = Self.typeBits[name] else {
                return invalid.append(invalidSchema("type names an unknown type", at: location))
            }
            mask |= bit
        }
        node.typeMask = mask
        node.flags |= SchemaProgram.NodeFlags.hasType
    }

    /// Stores a numeric keyword value and returns its index in the number table, or -1.
    private mutating func number(_ value: JSONValue, at location: String) -> Int32 {
        guard case .number(let number) = value else {
            invalid.append(invalidSchema("keyword value must be a number", at: location))
            return -1
        }
        program.numbers.append(number)
        return Int32(program.numbers.count - 1)
    }

    /// A non-negative integer keyword value (saturating at `Int.max`), or -1.
    private mutating func count(_ value: JSONValue, at location: String) -> Int {
        guard case .number(let number) = value, number.isInteger, !number.isNegative else {
            invalid.append(invalidSchema("keyword value must be a non-negative integer", at: location))
            return -1
        }
        return number.intValue ?? Int.max
    }

    private func invalidSchema(_ message: String, at location: String) -> CodexSchemaError {
        CodexSchemaError(code: .invalidSchema, message: message, schemaPointer: location)
    }

    // MARK: - References

    /// Resolves a root-local `$ref` ("#" or "#/…", percent-encoded) to a compiled schema position.
    private func resolve(_ reference: String, from node: Int32) throws(CodexSchemaError) -> Int32 {
        let location = program.pointers[Int(node)] + "/$ref"
        guard let decoded = JSONPointer.percentDecode(String(reference.dropFirst())), let tokens = JSONPointer.tokens(decoded) else {
            throw invalidSchema("$ref is not a valid JSON pointer fragment", at: location)
        }
        guard Self.isSchemaPosition(tokens) else {
            throw invalidSchema("$ref does not point at a schema position", at: location)
        }
        guard let target = nodesByPointer[JSONPointer.render(tokens)] else {
            throw invalidSchema("$ref points at a schema that does not exist", at: location)
        }
        return target
    }

    /// Whether the tokens walk from the root through schema positions only (not into annotation or
    /// keyword values such as `enum` data).
    private static func isSchemaPosition(_ tokens: [String]) -> Bool {
        var index = 0
        while index < tokens.count {
            switch tokens[index] {
            case "properties", "$defs", "definitions":
                guard index + 1 < tokens.count else { return false }
                index += 2
            case "allOf", "anyOf", "oneOf":
                guard index + 1 < tokens.count, let position = Int(tokens[index + 1]), position >= 0,
                      String(position) == tokens[index + 1] else { return false }
                index += 2
            case "items", "additionalProperties", "not":
                index += 1
            default:
                return false
            }
        }
        return true
    }
}
