import CodexSchema

/// `codexctl schema validate --schema SCHEMA.json [--partial] [--json] INSTANCE.json|-`.
enum SchemaValidateCommand: CLICommand {
    static let name = "validate"
    static let summary = "Validate a JSON instance against a schema."
    static let help = CommandHelp(
        command: "schema validate",
        overview: "Validate a JSON instance against a schema. Exit status: 0 valid, 1 invalid, 2 unreadable input, 3 the validator gave up (its work limit), 64 usage error.",
        arguments: [("<instance>", "The instance file, or - for standard input.")],
        options: [
            .value("--schema", "schema", "The schema file (up to 16 MiB).", required: true),
            .flag("--partial", "Validate as a streamed snapshot: skip required and minimum-size checks."),
            .value("--max-bytes", "n", "The largest instance read (default 268435456); more is refused at the limit."),
            .value("--max-work", "n", "The most subschema evaluations before the validator gives up (default 10000000; exit 3)."),
            .flag("--json", "Print one JSON object instead of text."),
        ]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        guard let parsed = parse(arguments, validate: { parsed in
            guard parsed.positionals.count == 1 else {
                throw UsageError(parsed.positionals.isEmpty ? "Missing expected argument '<instance>'" : "Too many arguments")
            }
            if parsed.positionals.first == "-", parsed.options["--schema"] == "-" {
                throw UsageError("the schema and the instance cannot both be read from standard input ('-')")
            }
            if let text = parsed.options["--max-bytes"], (Int(text) ?? 0) <= 0 { throw UsageError("--max-bytes needs a positive number of bytes") }
            if let text = parsed.options["--max-work"], (Int(text) ?? 0) <= 0 { throw UsageError("--max-work needs a positive number") }
        }), let schemaPath = parsed.options["--schema"] else { return Console.Status.usage }
        let limit = parsed.options["--max-bytes"].flatMap { Int($0) } ?? SchemaCommand.maximumInputBytes
        let json = parsed.has("--json")
        let schema: JSONValue
        switch SchemaCommand.loadSchema(schemaPath) {
        case .success(let value): schema = value
        case .failure(let failure): return failure.report(json: json)
        }
        let validator: JSONSchemaValidator
        do {
            var limits = JSONSchemaLimits()
            if let work = parsed.options["--max-work"].flatMap({ Int($0) }) { limits.maximumValidationWork = work }
            validator = try JSONSchemaValidator(schema: schema, limits: limits)
        } catch {
            // The instance was never judged: an error (the shape of every other one), not "valid": false.
            if json {
                Console.exactLine(JSONValue.object(["error": SchemaCommand.errorJSON(error)]).canonicalString())
            } else {
                Console.error("Error: Schema '\(schemaPath)' does not compile: \(error)\n")
            }
            return Console.Status.unreadableInput
        }
        // Validated straight from the parse tape: no JSONValue tree is built for the instance.
        let instance: [UInt8]
        switch SchemaCommand.loadBytes(parsed.positionals[0], what: "instance", limit: limit) {
        case .success(let bytes): instance = bytes
        case .failure(let failure): return failure.report(json: json)
        }
        let result: JSONValidationResult
        do {
            result = try validator.validate(
                jsonBytes: instance, options: .init(maximumDepth: SchemaCommand.maximumDepth, maximumBytes: limit),
                mode: parsed.has("--partial") ? .partial : .full
            )
        } catch where error.code.rawValue.hasPrefix("json_") {
            return SchemaCommand.LoadFailure.notJSON(what: "instance", path: parsed.positionals[0], error).report(json: json)
        } catch where error.code == .schemaWorkLimitExceeded {
            // Neither valid nor invalid: the validator stopped at its work bound.
            CLIFailure(code: error.code.rawValue, message: "\(error.message); the instance was neither accepted nor refused").report(json: json)
            return Console.Status.gaveUp
        } catch {
            CLIFailure(error).report(json: json)
            return Console.Status.failure
        }
        if json {
            let errors: [JSONValue] = result.errors.map { error in
                [
                    "instance_pointer": .string(error.instancePointer),
                    "schema_pointer": .string(error.schemaPointer),
                    "keyword": .string(error.keyword),
                    "message": .string(error.message),
                ]
            }
            Console.exactLine(JSONValue.object(["valid": .bool(result.isValid), "errors": .array(errors)]).canonicalString())
        } else if result.isValid {
            Console.line("valid")
        } else {
            Console.line("invalid: \(result.errors.count) error\(result.errors.count == 1 ? "" : "s")")
            for error in result.errors { Console.line("  \(error)") }
        }
        return result.isValid ? Console.Status.success : Console.Status.failure
    }
}
