import CodexCore

/// `codexctl`: the top-level command.
enum RootCommand: CLICommand {
    static let name = "codexctl"
    static let help = CommandHelp(
        command: "",
        overview: "CodexKit's admin tool: live turns and chat, an offline demo of the runtime, schema validation, state and recovery inspection, benchmarks.",
        options: [.flag("--version", "Show the version.")],
        subcommands: [
            ("demo", "Show everything the SDK does, offline, against a loopback model server (the main job)."),
            ("send", "Send one prompt to the service and stream the reply."),
            ("chat", "Chat on a persistent thread, with steering and Ctrl-C."),
            ("schema", "Compile JSON schemas, validate instances, run conformance suites."),
            ("responses", "Decode captured Responses API streams."),
            ("models", "List the models available to the signed-in account."),
            ("auth", "Show the sign-in state; sign in with a device code or an API key; sign out."),
            ("recovery", "Inspect and maintain a structured-recovery store."),
            ("threads", "Inspect the threads of a SQLite state store."),
            ("db", "Check or migrate a SQLite state store."),
            ("memory", "List, search and delete the records of a SQLite memory store."),
            ("bench", "Run the benchmarks (build with -c release)."),
            ("help", "Show help for a subcommand ('help --markdown': the whole command reference as Markdown)."),
        ]
    )
    static var subcommands: [any CLICommand.Type] { [DemoCommand.self, SendCommand.self, ChatCommand.self, SchemaCommand.self, ResponsesCommand.self, ModelsCommand.self, AuthCommand.self, RecoveryCommand.self, ThreadsCommand.self, DatabaseCommand.self, MemoryCommand.self, BenchCommand.self] }

    static func run(_ arguments: [String]) async -> Int32 {
        switch arguments.first {
        case "--version":
            Console.line("codexctl \(CodexKitVersion.current)")
            return Console.Status.success
        case "help" where arguments.dropFirst().first == "--markdown":
            // The command reference of Docs/CLI.md, generated from the same tables as the help pages.
            Console.out(reference())
            return Console.Status.success
        case "help":
            let path = arguments.dropFirst()
            guard let command = find(path) else {
                return Console.usageFailure("Unknown command '\(path.joined(separator: " "))'", help: help)
            }
            Console.out(command.help.text)
            return Console.Status.success
        default:
            return await dispatch(arguments)
        }
    }
}
