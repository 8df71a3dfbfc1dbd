import CodexSchema

/// `codexctl schema validate --schema SCHEMA.json [--partial] [--json] INSTANCE.json|-`.
enum SchemaValidateCommand: CLICommand {
    static let name = "validate"
    static let help = CommandHelp(
        overview: "Validate a JSON instance against a schema. Exit status: 0 valid, 1 invalid, 2 unreadable input, 64 usage error.",
        usage: "codexctl schema validate --schema <schema> [--partial] [--max-bytes <n>] [--json] <instance>",
        arguments: [("<instance>", "The instance file, or - for standard input.")],
        options: [
            ("--schema <schema>", "The schema file (required)."),
            ("--partial", "Validate as a streamed snapshot: skip required and minimum-size checks."),
            ("--max-bytes <n>", "The largest instance read (default 268435456); more is refused at the limit."),
            ("--json", "Print one JSON object instead of text."),
        ]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        if printsHelp(arguments) { return Console.Status.success }
        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments(arguments, flags: ["--json", "--partial"], valueOptions: ["--schema", "--max-bytes"])
        } catch {
            return Console.usageFailure(error.message, help: help)
        }
        guard let schemaPath = parsed.options["--schema"] else {
            return Console.usageFailure("Missing expected option '--schema <schema>'", help: help)
        }
        guard parsed.positionals.count == 1 else {
            return Console.usageFailure(parsed.positionals.isEmpty ? "Missing expected argument '<instance>'" : "Too many arguments", help: help)
        }
        var limit = SchemaCommand.maximumInputBytes
        if let text = parsed.options["--max-bytes"] {
            guard let value = Int(text), value > 0 else { return Console.usageFailure("--max-bytes needs a positive number of bytes", help: help) }
            limit = value
        }
        let json = parsed.has("--json")
        let schema: JSONValue
        switch SchemaCommand.loadJSON(schemaPath, what: "schema") {
        case .success(let value): schema = value
        case .failure(let failure):
            Console.error("Error: \(failure.message)\n")
            return failure.status
        }
        let validator: JSONSchemaValidator
        do {
            validator = try JSONSchemaValidator(schema: schema)
        } catch {
            if json {
                Console.line(JSONValue.object(["valid": false, "schema_error": SchemaCommand.errorJSON(error)]).canonicalString())
            }
            Console.error("Error: Schema '\(schemaPath)' does not compile: \(error)\n")
            return Console.Status.unreadableInput
        }
        // Validated straight from the parse tape: no JSONValue tree is built for the instance.
        let instance: [UInt8]
        switch SchemaCommand.loadBytes(parsed.positionals[0], what: "instance", limit: limit) {
        case .success(let bytes): instance = bytes
        case .failure(let failure):
            Console.error("Error: \(failure.message)\n")
            return failure.status
        }
        let result: JSONValidationResult
        do {
            result = try validator.validate(
                jsonBytes: instance, options: .init(maximumDepth: SchemaCommand.maximumDepth, maximumBytes: limit),
                mode: parsed.has("--partial") ? .partial : .full
            )
        } catch where error.code.rawValue.hasPrefix("json_") {
            Console.error("Error: Instance '\(parsed.positionals[0])' is not valid JSON: \(error)\n")
            return Console.Status.unreadableInput
        } catch {
            Console.error("Error: \(error)\n")
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
            Console.line(JSONValue.object(["valid": .bool(result.isValid), "errors": .array(errors)]).canonicalString())
        } else if result.isValid {
            Console.line("valid")
        } else {
            Console.line("invalid: \(result.errors.count) error\(result.errors.count == 1 ? "" : "s")")
            for error in result.errors { Console.line("  \(error)") }
        }
        return result.isValid ? Console.Status.success : Console.Status.failure
    }
}
