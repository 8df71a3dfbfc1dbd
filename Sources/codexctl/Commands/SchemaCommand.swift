import CodexCore
import CodexSchema
import Foundation

/// `codexctl schema`: the JSON schema tools.
enum SchemaCommand: CLICommand {
    static let name = "schema"
    static let summary = "Compile JSON schemas, validate instances, run conformance suites."
    static let help = CommandHelp(
        command: "schema",
        overview: "Compile JSON schemas against CodexKit's supported subset, validate instances, run conformance suites.",
        subcommands: subcommandRows
    )
    static var subcommands: [any CLICommand.Type] { [SchemaCheckCommand.self, SchemaValidateCommand.self, SchemaConformanceCommand.self] }

    static func run(_ arguments: [String]) async -> Int32 { await dispatch(arguments) }

    /// The largest instance (and suite file) the schema commands read by default: 256 MiB.
    static let maximumInputBytes = 256 * 1024 * 1024
    /// The largest schema they read: 16 MiB. A schema becomes a tree of values (several times its size
    /// in memory), and real schemas are kilobytes.
    static let maximumSchemaBytes = 16 * 1024 * 1024
    /// How deep a schema or instance may nest.
    static let maximumDepth = 512

    /// Reads a JSON file (or `-` for standard input) for a schema command, up to
    /// ``maximumInputBytes`` (a larger input is refused at the limit, never read whole).
    static func loadBytes(_ path: String, what: String, limit: Int = maximumInputBytes) -> Result<[UInt8], LoadFailure> {
        do {
            return .success(try Console.readInput(path, limit: limit))
        } catch {
            if case .tooLarge(limit: let limit) = error.kind {
                return .failure(LoadFailure(
                    code: "json_size_limit_exceeded",
                    message: "\(what.capitalized) '\(path)' is not valid JSON: input is larger than the limit of \(limit) bytes"
                ))
            }
            return .failure(LoadFailure(code: "unreadable_input", message: "Cannot read \(what) '\(path)': \(BoundedInputFile.Failure.reason(error.systemError))"))
        }
    }

    /// Reads and parses a schema file (or `-` for standard input), up to ``maximumSchemaBytes``.
    static func loadSchema(_ path: String) -> Result<JSONValue, LoadFailure> {
        let what = "schema"
        return loadBytes(path, what: what, limit: maximumSchemaBytes).flatMap { bytes in
            do {
                return .success(try JSONValue(parsing: bytes, options: .init(maximumDepth: maximumDepth, maximumBytes: maximumSchemaBytes)))
            } catch let error as CodexSchemaError {
                return .failure(LoadFailure.notJSON(what: what, path: path, error))
            } catch {
                return .failure(LoadFailure(code: "json_invalid", message: "\(what.capitalized) '\(path)' is not valid JSON"))
            }
        }
    }

    /// An input that could not be read or parsed (exit status 2).
    struct LoadFailure: Error {
        let code: String
        let message: String

        /// A file that is not valid JSON: the parser's code, and its reason and offset in the message.
        static func notJSON(what: String, path: String, _ error: CodexSchemaError) -> LoadFailure {
            LoadFailure(
                code: error.code.rawValue,
                message: "\(what.capitalized) '\(path)' is not valid JSON: \(error.message)" + (error.byteOffset.map { " (at byte \($0))" } ?? "")
            )
        }

        /// Prints it (`{"error": …}` on stdout with `json`, else `Error: <code>: …` on stderr); the exit status.
        func report(json: Bool) -> Int32 {
            if json {
                CLIFailure(code: code, message: message).report(json: true)
            } else {
                Console.error("Error: \(code): \(message)\n")
            }
            return Console.Status.unreadableInput
        }
    }

    /// The JSON object printed for a schema compilation error.
    static func errorJSON(_ error: CodexSchemaError) -> JSONValue {
        var members: JSONObject = ["code": .string(error.code.rawValue), "message": .string(error.message)]
        if let pointer = error.schemaPointer { members["schema_pointer"] = .string(pointer) }
        if !error.unsupportedLocations.isEmpty { members["locations"] = .array(error.unsupportedLocations.map(JSONValue.string)) }
        return .object(members)
    }
}

/// `codexctl schema check SCHEMA.json`.
enum SchemaCheckCommand: CLICommand {
    static let name = "check"
    static let summary = "Compile a schema and report unsupported keywords."
    static let help = CommandHelp(
        command: "schema check",
        overview: "Compile a schema against CodexKit's supported keyword subset and report every unsupported keyword.",
        arguments: [("<schema>", "The schema file (up to 16 MiB), or - for standard input.")],
        options: [.flag("--json", "Print one JSON object instead of text.")]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        guard let parsed = parse(arguments) else { return Console.Status.usage }
        guard parsed.positionals.count == 1 else {
            return Console.usageFailure(parsed.positionals.isEmpty ? "Missing expected argument '<schema>'" : "Too many arguments", help: help)
        }
        let schema: JSONValue
        switch SchemaCommand.loadSchema(parsed.positionals[0]) {
        case .success(let value): schema = value
        case .failure(let failure): return failure.report(json: parsed.has("--json"))
        }
        do {
            let validator = try JSONSchemaValidator(schema: schema)
            if parsed.has("--json") {
                Console.exactLine(JSONValue.object(["ok": true, "nodes": .number(JSONNumber(validator.nodeCount))]).canonicalString())
            } else {
                Console.line("ok: schema compiles (\(validator.nodeCount) \(validator.nodeCount == 1 ? "subschema" : "subschemas"))")
            }
            return Console.Status.success
        } catch {
            if parsed.has("--json") {
                var object = SchemaCommand.errorJSON(error).objectValue ?? [:]
                object["ok"] = false
                Console.exactLine(JSONValue.object(object).canonicalString())
            } else {
                Console.line("error: \(error.code): \(error.message)")
                let locations = error.unsupportedLocations.isEmpty ? [error.schemaPointer].compactMap { $0 } : error.unsupportedLocations
                for location in locations {
                    Console.line("  at \(location.isEmpty ? "(root)" : location)")
                }
            }
            return Console.Status.failure
        }
    }
}
