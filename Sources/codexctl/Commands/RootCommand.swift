import CodexCore

/// `codexctl`: the top-level command.
enum RootCommand: CLICommand {
    static let name = "codexctl"
    static let summary = "CodexKit's admin tool."
    static let help = CommandHelp(
        command: "",
        overview: "CodexKit's admin tool: live turns and chat, an offline demo of the runtime, schema validation, state, usage and recovery inspection, benchmarks.",
        options: [.flag("--version", "Show the version.")],
        subcommands: subcommandRows + [
            ("help", "Show help for a subcommand ('help --markdown': the command reference as Markdown; 'help errors': every error code, what it means, what to do)."),
        ]
    )
    static var subcommands: [any CLICommand.Type] { [
        DemoCommand.self, SendCommand.self, ExecCommand.self, ChatCommand.self, SchemaCommand.self, ResponsesCommand.self, ModelsCommand.self,
        AuthCommand.self, LoginCommand.self, LogoutCommand.self, RecoveryCommand.self, ThreadsCommand.self, ApprovalsCommand.self, MCPCommand.self, DatabaseCommand.self,
        MemoryCommand.self, UsageCommand.self,
        BenchCommand.self, CompletionsCommand.self,
    ] }

    static func run(_ arguments: [String]) async -> Int32 {
        switch arguments.first {
        case "--version":
            guard arguments.count == 1 else { return Console.usageFailure("Unexpected argument '\(arguments[1])' after --version", help: help) }
            Console.line("codexctl \(CodexKitVersion.current)")
            return Console.Status.success
        case "help" where arguments.dropFirst().first == "errors":
            // Every error code with its meaning and what to do: the reference of Docs/Errors.md.
            guard arguments.count == 2 else { return Console.usageFailure("Unexpected argument '\(arguments[2])' after 'help errors'", help: help) }
            Console.out(ErrorReference.markdown())
            return Console.Status.success
        case "help" where arguments.dropFirst().first == "--markdown":
            // The command reference of Docs/CLI.md, generated from the same tables as the help pages.
            guard arguments.count == 2 else { return Console.usageFailure("Unexpected argument '\(arguments[2])' after 'help --markdown'", help: help) }
            Console.out(reference())
            return Console.Status.success
        case "help":
            let path = arguments.dropFirst()
            // `help help` and `help -h` ask about help itself: its line is on the root page.
            if path.count == 1, let word = path.first, ["help", "-h", "--help"].contains(word) {
                Console.out(help.text)
                return Console.Status.success
            }
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
