/// `codexctl bench`: the benchmark suites.
enum BenchCommand: CLICommand {
    static let name = "bench"
    static let summary = "Run the benchmarks (build with -c release)."
    static let help = CommandHelp(
        command: "bench",
        overview: "Run a benchmark suite in-process and print each figure next to a baseline measured in the same run. Build with 'swift run -c release'.",
        subcommands: subcommandRows
    )
    static var subcommands: [any CLICommand.Type] { [SchemaBenchCommand.self, SSEBenchCommand.self, TransportBenchCommand.self, RecoveryBenchCommand.self, StorageBenchCommand.self, MemoryBenchCommand.self, RuntimeBenchCommand.self, SSEClientBenchCommand.self, TransportBenchClientCommand.self] }

    static func run(_ arguments: [String]) async -> Int32 { await dispatch(arguments) }
}
