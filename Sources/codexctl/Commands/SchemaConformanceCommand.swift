import CodexCore
import CodexSchema
import Foundation

/// `codexctl schema conformance DIR`: runs every `*.json` suite file in a directory.
enum SchemaConformanceCommand: CLICommand {
    static let name = "conformance"
    static let summary = "Run a directory of JSON-Schema-Test-Suite files."
    static let help = CommandHelp(
        command: "schema conformance",
        overview: """
        Run every *.json file in a directory (in JSON-Schema-Test-Suite format, or CodexKit's rejected-schema \
        format) against the validator. Prints one line per file and a last line 'N passed, M failed'; exits 1 on \
        any failure.
        """,
        arguments: [("<directory>", "A directory of suite files (searched recursively).")],
        options: [
            .flag("--verbose", "List every failing test (without it, a file's failures are listed only when there are 20 or fewer)."),
            .flag("--json", "Print one JSON object: passed, failed, and per file its counts and failures."),
        ]
    )

    /// One file's outcome.
    private struct FileOutcome {
        let file: String
        var passed = 0
        var failed = 0
        var failures: [String] = []
        var error: String?
    }

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        guard let parsed = parse(arguments, validate: { parsed in
            guard parsed.positionals.count == 1 else {
                throw UsageError(parsed.positionals.isEmpty ? "Missing expected argument '<directory>'" : "Too many arguments")
            }
        }) else { return Console.Status.usage }
        let json = parsed.has("--json")
        let directory = URL(fileURLWithPath: parsed.positionals[0])
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue,
              let enumerator = FileManager.default.enumerator(atPath: directory.path) else {
            return SchemaCommand.LoadFailure(code: "unreadable_input", message: "Cannot read directory '\(directory.path)'").report(json: json)
        }
        let files = enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".json") }.sorted()
        var outcomes: [FileOutcome] = []
        for file in files {
            var outcome = FileOutcome(file: file)
            let bytes: [UInt8]
            do {
                bytes = try Console.readInput(directory.appendingPathComponent(file).path, limit: SchemaCommand.maximumInputBytes)
            } catch {
                // A file that cannot be read (a dangling link, no permission) fails with the system's reason.
                outcome.failed += 1
                outcome.error = "unreadable_input: Cannot read '\(file)': \(BoundedInputFile.Failure.reason(error.systemError))"
                outcomes.append(outcome)
                continue
            }
            do {
                for result in try JSONSchemaTestSuite.run(fileContents: bytes) {
                    if result.passed {
                        outcome.passed += 1
                    } else {
                        outcome.failed += 1
                        let name = result.test.isEmpty ? result.group : "\(result.group) / \(result.test)"
                        outcome.failures.append("\(name): \(result.detail)")
                    }
                }
            } catch {
                outcome.failed += 1
                outcome.error = "\(error)"
            }
            outcomes.append(outcome)
        }
        let passed = outcomes.reduce(0) { $0 + $1.passed }
        let failed = outcomes.reduce(0) { $0 + $1.failed }
        if json {
            let perFile: [JSONValue] = outcomes.map { outcome in
                [
                    "file": .string(outcome.file), "passed": .number(JSONNumber(outcome.passed)), "failed": .number(JSONNumber(outcome.failed)),
                    "failures": .array(outcome.failures.map(JSONValue.string)), "error": outcome.error.map(JSONValue.string) ?? .null,
                ]
            }
            Console.exactLine(JSONValue.object(["passed": .number(JSONNumber(passed)), "failed": .number(JSONNumber(failed)), "files": .array(perFile)]).compactString())
        } else {
            for outcome in outcomes {
                if let error = outcome.error {
                    Console.line("\(outcome.file): error: \(error)")
                    continue
                }
                Console.line("\(outcome.file): \(outcome.passed) passed, \(outcome.failed) failed")
                if parsed.has("--verbose") || outcome.failed <= 20 {
                    for failure in outcome.failures { Console.line("  FAIL \(failure)") }
                }
            }
            Console.line("\(passed) passed, \(failed) failed")
        }
        return failed == 0 ? Console.Status.success : Console.Status.failure
    }
}
