/// `codexctl completions SHELL`: a completion script for bash, zsh or fish, generated from the command
/// table itself (every command, subcommand, option and alias the help pages show), so it cannot drift.
enum CompletionsCommand: CLICommand {
    static let name = "completions"
    static let summary = "Print a shell completion script (bash, zsh or fish)."
    static let help = CommandHelp(
        command: "completions",
        overview: """
        Print a completion script for SHELL, generated from the command table. Install it with, for example: \
        bash: codexctl completions bash > ~/.local/share/bash-completion/completions/codexctl; \
        zsh: codexctl completions zsh > "${fpath[1]}/_codexctl"; \
        fish: codexctl completions fish > ~/.config/fish/completions/codexctl.fish.
        """,
        arguments: [("<shell>", "bash, zsh or fish.")]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        await runParsed(arguments, validate: { parsed in
            guard parsed.positionals.count == 1, ["bash", "zsh", "fish"].contains(parsed.positionals[0]) else {
                throw UsageError("expected one shell: bash, zsh or fish")
            }
        }) { parsed in
            let table = CompletionTable(root: RootCommand.self)
            switch parsed.positionals[0] {
            case "bash": Console.out(table.bash())
            case "zsh": Console.out(table.zsh())
            default: Console.out(table.fish())
            }
        }
    }
}
