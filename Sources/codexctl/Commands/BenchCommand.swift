/// `codexctl bench`: the benchmark suites.
enum BenchCommand: CLICommand {
    static let name = "bench"
    static let help = CommandHelp(
        command: "bench",
        overview: "Run a benchmark suite in-process and print each figure next to a baseline measured in the same run. Build with 'swift run -c release'.",
        subcommands: [("schema", "JSON parsing and schema validation throughput."), ("sse", "SSE framing, event decoding and streaming throughput."),
                      ("transport", "The libcurl and URLSession clients side by side: streaming, small requests, a paused consumer."),
                      ("recovery", "Structured-recovery lifecycles, fsyncs per lifecycle, inventory at 10,000 operations."),
                      ("storage", "SQLite state store: appends, restore and paging next to raw SQLite loops."),
                      ("memory", "SQLite memory store: search p50 and p99 over 100,000 records next to the raw FTS5 statement."),
                      ("runtime", "Runtime events per second and streamed structured output next to bare baselines."),
                      ("sse-client", "The client half of 'bench sse' (run by it)."),
                      ("transport-client", "The measuring half of 'bench transport' (run by it).")]
    )
    static var subcommands: [any CLICommand.Type] { [SchemaBenchCommand.self, SSEBenchCommand.self, TransportBenchCommand.self, RecoveryBenchCommand.self, StorageBenchCommand.self, MemoryBenchCommand.self, RuntimeBenchCommand.self, SSEClientBenchCommand.self, TransportBenchClientCommand.self] }

    static func run(_ arguments: [String]) async -> Int32 { await dispatch(arguments) }
}
