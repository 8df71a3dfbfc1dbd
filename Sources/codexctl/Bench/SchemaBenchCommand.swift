import CodexSchema
import Foundation

/// `codexctl bench schema`: the workloads of `Benchmarks/schema/` with the method of its README.
enum SchemaBenchCommand: CLICommand {
    static let name = "schema"
    static let summary = "JSON parsing and schema validation throughput."
    static let help = CommandHelp(
        command: "bench schema",
        overview: """
        Validations per second (median of the runs) for each workload in Benchmarks/schema, 'parsed' and \
        'parse+validate', each next to Foundation's JSONSerialization parsing the same bytes; plus the JSON \
        parser's MB/s on big_payload next to JSONSerialization's.
        """,
        options: [
            .flag("--json", "Print one JSON object (the shared benchmark shape)."),
            .value("--workloads", "dir", "The workload directory (default: Benchmarks/schema of this checkout)."),
            .value("--only", "name", "Run only the named workload."),
            .value("--mode", "mode", "Run only one mode: parsed, parsed-value, parse+validate or json_parse.")
                .suggesting(["parsed", "parsed-value", "parse+validate", "json_parse"]),
            .value("--run-seconds", "s", "Minimum duration of one run (default 0.5)."),
            .value("--runs", "n", "Runs per figure; the median is reported (default 5)."),
            .value("--iterations", "n", "Run exactly n operations per run instead of calibrating (for valgrind)."),
        ]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        guard let parsed = parse(arguments, validate: { try $0.expectNoPositionals() }) else { return Console.Status.usage }
        let runSeconds = parsed.options["--run-seconds"].map { Double($0) } ?? 0.5
        let runs = parsed.options["--runs"].map { Int($0) } ?? 5
        guard let runSeconds, runSeconds > 0, let runs, runs > 0 else {
            return Console.usageFailure("--run-seconds and --runs must be positive numbers", help: help)
        }
        let directory = parsed.options["--workloads"].map { URL(fileURLWithPath: $0) } ?? BenchData.directory("schema")
        do {
            let report = try SchemaBenchmark(directory: directory, only: parsed.options["--only"], mode: parsed.options["--mode"], timer: BenchTimer(runSeconds: runSeconds, runs: runs, fixedIterations: parsed.options["--iterations"].flatMap { Int($0) })).run()
            report.print(json: parsed.has("--json"))
            return Console.Status.success
        } catch {
            CLIFailure(error).report(json: parsed.has("--json"))
            return Console.Status.failure
        }
    }
}

/// Locates benchmark data: `Benchmarks/<suite>` under the current directory, else in this checkout.
enum BenchData {
    static func directory(_ suite: String) -> URL {
        let local = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Benchmarks/\(suite)")
        if FileManager.default.fileExists(atPath: local.path) { return local }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Benchmarks/\(suite)")
    }
}

/// Runs the schema workloads.
struct SchemaBenchmark {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let directory: URL
    let only: String?
    let mode: String?
    let timer: BenchTimer

    private func wants(_ candidate: String) -> Bool { mode == nil || mode == candidate }

    func run() throws -> BenchReport {
        var report = BenchReport(suite: "schema")
        let manifest = try JSONValue(parsing: try Data(contentsOf: directory.appendingPathComponent("workloads.json")))
        guard case .array(let workloads) = manifest else { throw Failure(description: "workloads.json is not an array") }
        for workload in workloads {
            guard let name = workload["name"]?.stringValue, let schemaFile = workload["schema"]?.stringValue,
                  let instanceFile = workload["instance"]?.stringValue, let expected = workload["expected_valid"]?.boolValue else {
                throw Failure(description: "a workload entry lacks name, schema, instance or expected_valid")
            }
            if let only, only != name { continue }
            let schema = try JSONValue(parsing: try Data(contentsOf: directory.appendingPathComponent(schemaFile)))
            let validator = try JSONSchemaValidator(schema: schema)
            let bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent(instanceFile)))
            let data = Data(bytes)
            let instance = try JSONValue(parsing: bytes, options: .init(maximumDepth: 64))
            guard try validator.isValid(instance) == expected else {
                throw Failure(description: "\(name): verdict differs from expected_valid")
            }

            let foundationParses = mode != nil ? 0 : try timer.operationsPerSecond {
                let object = try JSONSerialization.jsonObject(with: data)
                return object is NSNull ? 0 : 1
            }
            if wants("parsed") {
                let document = try JSONDocument(parsing: bytes)
                let parsed = try timer.operationsPerSecond { try validator.isValid(document) ? 1 : 0 }
                report.results.append(BenchResult(
                    name: name, mode: "parsed", metric: "validations_per_second", value: parsed, unit: "1/s", bytes: bytes.count
                ))
            }
            if wants("parsed-value") {
                let parsed = try timer.operationsPerSecond { try validator.isValid(instance) ? 1 : 0 }
                report.results.append(BenchResult(
                    name: name, mode: "parsed-value", metric: "validations_per_second", value: parsed, unit: "1/s", bytes: bytes.count
                ))
            }
            if wants("parse+validate") {
            let parseAndValidate = try timer.operationsPerSecond {
                try validator.isValid(jsonBytes: bytes) ? 1 : 0
            }
            report.results.append(BenchResult(
                name: name, mode: "parse+validate", metric: "validations_per_second", value: parseAndValidate, unit: "1/s",
                bytes: bytes.count, baseline: ("JSONSerialization parse", foundationParses)
            ))
            }
            if name == "big_payload", wants("json_parse") {
                let megabytes = Double(bytes.count) / 1_000_000
                let ourParse = try timer.operationsPerSecond {
                    if case .array(let elements) = try JSONValue(parsing: bytes) { return elements.count }
                    return 0
                }
                report.results.append(BenchResult(
                    name: name, mode: "json_parse", metric: "megabytes_per_second", value: ourParse * megabytes, unit: "MB/s",
                    bytes: bytes.count, baseline: ("JSONSerialization", foundationParses * megabytes)
                ))
            }
        }
        return report
    }
}
