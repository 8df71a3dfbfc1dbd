/// Spellings of other tools' habits: `codexctl exec` is `send` (the Codex CLI's `codex exec`), and
/// `codexctl login`, `login status` and `logout` are the `auth` commands.
enum AliasCommand {
    /// `target`'s help page under another command name, with `note` first in its overview.
    static func help(_ target: CommandHelp, as command: String, note: String) -> CommandHelp {
        var help = target
        help.command = command
        help.overview = note + " " + target.overview
        return help
    }

    /// Runs `target` with `arguments` once they parse by `help` (the alias's page, with the target's
    /// options): a usage mistake is reported with the alias's own usage line.
    static func forward(_ arguments: [String], help: CommandHelp, to target: ([String]) async -> Int32) async -> Int32 {
        do {
            _ = try ParsedArguments(arguments, for: help)
        } catch {
            return Console.usageFailure(error.message, help: help)
        }
        return await target(arguments)
    }
}

/// `codexctl exec`: `send` under the Codex CLI's name.
enum ExecCommand: CLICommand {
    static let name = "exec"
    static let summary = "The same as 'send' (the Codex CLI's name for it)."
    static let help = AliasCommand.help(SendCommand.help, as: "exec", note: "The same as 'codexctl send'.")

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        return await AliasCommand.forward(arguments, help: help, to: SendCommand.run)
    }
}

/// `codexctl login` (and `login status`): `auth login` and `auth status`.
enum LoginCommand: CLICommand {
    static let name = "login"
    static let summary = "The same as 'auth login'; 'login status' is 'auth status'."
    static let help = AliasCommand.help(
        AuthLoginCommand.help, as: "login", note: "The same as 'codexctl auth login'; 'codexctl login status' is 'codexctl auth status'."
    )

    static var aliasedSubcommands: [any CLICommand.Type] { [AuthStatusCommand.self] }

    static func run(_ arguments: [String]) async -> Int32 {
        if let first = arguments.first, let aliased = aliasedSubcommands.first(where: { $0.name == first }) {
            return await aliased.run(Array(arguments.dropFirst()))
        }
        guard !printsHelp(arguments) else { return Console.Status.success }
        return await AliasCommand.forward(arguments, help: help, to: AuthLoginCommand.run)
    }
}

/// `codexctl logout`: `auth logout`.
enum LogoutCommand: CLICommand {
    static let name = "logout"
    static let summary = "The same as 'auth logout'."
    static let help = AliasCommand.help(AuthLogoutCommand.help, as: "logout", note: "The same as 'codexctl auth logout'.")

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        return await AliasCommand.forward(arguments, help: help, to: AuthLogoutCommand.run)
    }
}
