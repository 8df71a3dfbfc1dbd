import CodexCore
import CodexSchema

/// The runtime's host tools, each with its input schema compiled once, and the argument check every
/// call passes before its executor runs.
struct ToolRegistry: Sendable {
    /// One registered tool.
    struct Entry: Sendable {
        let tool: AgentTool
        let validator: JSONSchemaValidator
        /// Whether calls may run together with other parallel-safe calls: the tool opted in and needs
        /// no approval (approval-gated tools always run alone).
        var isParallelSafe: Bool { tool.definition.supportsParallelExecution && tool.definition.approvalPolicy == .automatic }
    }

    /// What a call's arguments turned out to be.
    enum ArgumentCheck: Sendable {
        /// Parsed and valid against the input schema.
        case valid(JSONValue)
        /// Refused; the text tells the model why.
        case invalid(String)
    }

    /// The largest arguments text accepted: 1 MiB.
    static let maximumArgumentBytes = 1 << 20
    /// The deepest nesting accepted in arguments.
    static let maximumArgumentDepth = 64
    /// The most schema errors named in a refusal.
    static let maximumReportedErrors = 5

    private let entries: [String: Entry]
    /// The definitions, in the order the tools were given (what a turn offers the model).
    let definitions: [ToolDefinition]

    /// Checks every tool (name pattern, unique names, an input schema CodexSchema can enforce).
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `invalid_tool_definition`.
    init(_ tools: [AgentTool]) throws {
        var entries: [String: Entry] = [:]
        for tool in tools {
            let name = tool.definition.name
            try tool.definition.validate()
            guard entries[name] == nil else {
                throw AgentRuntimeError(code: .invalidToolDefinition, message: "tool '\(name)' is registered twice")
            }
            let validator: JSONSchemaValidator
            do {
                validator = try JSONSchemaValidator(schema: tool.argumentSchema ?? tool.definition.inputSchema)
            } catch {
                let places = (error.unsupportedLocations.isEmpty ? [error.schemaPointer ?? ""] : error.unsupportedLocations)
                    .map { $0.isEmpty ? "(root)" : $0 }.joined(separator: ", ")
                throw AgentRuntimeError(
                    code: .invalidToolDefinition,
                    message: "the input schema of tool '\(name)' cannot be enforced (\(error.code.rawValue) at \(places))", underlying: error
                )
            }
            entries[name] = Entry(tool: tool, validator: validator)
        }
        self.entries = entries
        definitions = tools.map(\.definition)
    }

    /// The tool called `name`, if registered.
    func entry(named name: String) -> Entry? { entries[name] }

    /// Parses `arguments` within the limits and validates them against the tool's input schema. Empty
    /// arguments count as `{}`.
    func check(_ arguments: String, for entry: Entry) -> ArgumentCheck {
        let name = entry.tool.definition.name
        let text = arguments.allSatisfy(\.isWhitespace) ? "{}" : arguments
        guard text.utf8.count <= Self.maximumArgumentBytes else {
            return .invalid("The arguments for '\(name)' are larger than \(Self.maximumArgumentBytes) bytes; the tool was not run.")
        }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: text, options: JSONParsingOptions(maximumDepth: Self.maximumArgumentDepth, maximumBytes: Self.maximumArgumentBytes))
        } catch {
            return .invalid("The arguments for '\(name)' are not valid JSON (\(error.code.rawValue)); the tool was not run.")
        }
        let result: JSONValidationResult
        do {
            result = try entry.validator.validate(value)
        } catch {
            return .invalid("The arguments for '\(name)' are too complex to check (\(error.code.rawValue)); the tool was not run.")
        }
        guard result.isValid else {
            let named = result.errors.prefix(Self.maximumReportedErrors).map { error in
                "\(error.instancePointer.isEmpty ? "(root)" : error.instancePointer): \(error.keyword): \(error.message)"
            }
            let more = result.errors.count > Self.maximumReportedErrors ? " (and \(result.errors.count - Self.maximumReportedErrors) more)" : ""
            return .invalid("The arguments for '\(name)' do not match its input schema: \(named.joined(separator: "; "))\(more). The tool was not run.")
        }
        return .valid(value)
    }
}
