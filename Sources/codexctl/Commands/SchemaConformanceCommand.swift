import CodexCore
import CodexSchema
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `codexctl schema conformance DIR`: runs every `*.json` suite file in a directory.
enum SchemaConformanceCommand: CLICommand {
    static let name = "conformance"
    static let summary = "Run a directory of JSON-Schema-Test-Suite files."
    static let help = CommandHelp(
        command: "schema conformance",
        overview: """
        Run every *.json file in a directory (in JSON-Schema-Test-Suite format, or CodexKit's rejected-schema \
        format) against the validator. Prints one line per file and a last line 'N passed, M failed'; exits 1 on \
        any failure, a file or directory inside it that cannot be read included, and with no_suite_files when \
        the directory holds no *.json file (a wrong path never passes).
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
        var top: [String] = []
        do {
            top = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            return SchemaCommand.LoadFailure(code: "unreadable_input", message: "Cannot read directory '\(directory.path)'").report(json: json)
        }
        var outcomes: [FileOutcome] = []
        // A directory inside that cannot be read fails the run by name, never skipped in silence.
        let (files, unreadable) = suiteFiles(in: directory.path, names: top)
        for entry in unreadable {
            var outcome = FileOutcome(file: entry.path + (entry.isDirectory ? "/" : ""))
            outcome.failed = 1
            outcome.error = "unreadable_input: Cannot read \(entry.isDirectory ? "directory " : "")'\(entry.path)'"
            outcomes.append(outcome)
        }
        guard !files.isEmpty || !unreadable.isEmpty else {
            return SchemaCommand.LoadFailure(code: "no_suite_files", message: "'\(directory.path)' holds no *.json suite file").report(json: json)
        }
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

    /// The `*.json` files under `root` (relative paths, sorted), given its entries `names`, and the
    /// entries inside it that could not be read: directories that could not be listed, and names that
    /// were listed but cannot be looked at (a directory that can be read but not entered). Symbolic links
    /// to directories are not followed (a link back up would never end); links to files are read like
    /// files.
    private static func suiteFiles(in root: String, names: [String]) -> (files: [String], unreadable: [(path: String, isDirectory: Bool)]) {
        var files: [String] = []
        var unreadable: [(path: String, isDirectory: Bool)] = []
        var pending: [(relative: String, names: [String])] = [("", names)]
        while let (relative, names) = pending.popLast() {
            for name in names {
                let path = relative.isEmpty ? name : relative + "/" + name
                var info = stat()
                guard lstat(root + "/" + path, &info) == 0 else {
                    // Listed but not reachable (a directory that can be read but not entered): its
                    // entries fail the run by name too; one removed meanwhile is simply gone.
                    if errno != ENOENT { unreadable.append((path, false)) }
                    continue
                }
                if (info.st_mode & S_IFMT) == S_IFDIR {
                    do {
                        pending.append((path, try FileManager.default.contentsOfDirectory(atPath: root + "/" + path)))
                    } catch {
                        unreadable.append((path, true))
                    }
                } else if name.hasSuffix(".json") {
                    files.append(path)
                }
            }
        }
        return (files.sorted(), unreadable.sorted { $0.path < $1.path })
    }
}
