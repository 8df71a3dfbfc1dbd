/// `codexctl bench`: the benchmark suites.
enum BenchCommand: CLICommand {
    static let name = "bench"
    static let help = CommandHelp(
        overview: "Run a benchmark suite in-process and print each figure next to a baseline measured in the same run. Build with 'swift run -c release'.",
        usage: "codexctl bench <suite> [--json]",
        subcommands: [("schema", "JSON parsing and schema validation throughput.")]
    )
    static var subcommands: [any CLICommand.Type] { [SchemaBenchCommand.self] }

    static func run(_ arguments: [String]) async -> Int32 { await dispatch(arguments) }
}
