import CodexSchema
import Foundation

/// `codexctl schema conformance DIR`: runs every `*.json` suite file in a directory.
enum SchemaConformanceCommand: CLICommand {
    static let name = "conformance"
    static let help = CommandHelp(
        command: "schema conformance",
        overview: """
        Run every *.json file in a directory (in JSON-Schema-Test-Suite format, or CodexKit's rejected-schema \
        format) against the validator. Prints one line per file and a last line 'N passed, M failed'; exits 1 on \
        any failure.
        """,
        arguments: [("<directory>", "A directory of suite files (searched recursively).")],
        options: [.flag("--verbose", "List every failing test, not only the counts.")]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        if printsHelp(arguments) { return Console.Status.success }
        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments(arguments, for: help)
        } catch {
            return Console.usageFailure(error.message, help: help)
        }
        guard parsed.positionals.count == 1 else {
            return Console.usageFailure(parsed.positionals.isEmpty ? "Missing expected argument '<directory>'" : "Too many arguments", help: help)
        }
        let directory = URL(fileURLWithPath: parsed.positionals[0])
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue,
              let enumerator = FileManager.default.enumerator(atPath: directory.path) else {
            Console.error("Error: Cannot read directory '\(directory.path)'\n")
            return Console.Status.unreadableInput
        }
        let files = enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".json") }.sorted()
        var passed = 0
        var failed = 0
        for file in files {
            let outcomes: [JSONSchemaTestSuite.Outcome]
            do {
                let data = try Data(contentsOf: directory.appendingPathComponent(file))
                outcomes = try JSONSchemaTestSuite.run(fileContents: [UInt8](data))
            } catch {
                Console.line("\(file): error: \(error)")
                failed += 1
                continue
            }
            let filePassed = outcomes.filter(\.passed).count
            let fileFailed = outcomes.count - filePassed
            passed += filePassed
            failed += fileFailed
            Console.line("\(file): \(filePassed) passed, \(fileFailed) failed")
            for outcome in outcomes where !outcome.passed {
                if parsed.has("--verbose") || fileFailed <= 20 {
                    let name = outcome.test.isEmpty ? outcome.group : "\(outcome.group) / \(outcome.test)"
                    Console.line("  FAIL \(name): \(outcome.detail)")
                }
            }
        }
        Console.line("\(passed) passed, \(failed) failed")
        return failed == 0 ? Console.Status.success : Console.Status.failure
    }
}
