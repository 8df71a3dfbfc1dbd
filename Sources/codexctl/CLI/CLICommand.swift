/// One `codexctl` command or command group.
protocol CLICommand {
    /// The word that selects it, e.g. `schema`.
    static var name: String { get }
    /// One line for its group's help page (the group lists its subcommands' summaries, in order).
    static var summary: String { get }
    /// Its help page.
    static var help: CommandHelp { get }
    /// Subcommands, for a group.
    static var subcommands: [any CLICommand.Type] { get }
    /// Other commands reached under this one's name as well as their own (`login status` is `auth
    /// status`): `help` finds them and shell completion offers them; the reference lists them once, under
    /// their own group.
    static var aliasedSubcommands: [any CLICommand.Type] { get }
    /// Runs it with the arguments after its name; returns the exit status.
    static func run(_ arguments: [String]) async -> Int32
}

extension CLICommand {
    static var subcommands: [any CLICommand.Type] { [] }
    static var aliasedSubcommands: [any CLICommand.Type] { [] }

    /// The subcommand rows of a group's help page: each subcommand's name and summary, from the
    /// subcommand types themselves, so a group lists its children once.
    static var subcommandRows: [(String, String)] { subcommands.map { ($0.name, $0.summary) } }

    /// Dispatches to a subcommand, or prints help. For command groups.
    static func dispatch(_ arguments: [String]) async -> Int32 {
        guard let first = arguments.first else {
            Console.out(help.text)
            return Console.Status.success
        }
        if first == "-h" || first == "--help" {
            Console.out(help.text)
            return Console.Status.success
        }
        guard let command = subcommands.first(where: { $0.name == first }) else {
            return Console.usageFailure("Unknown subcommand '\(first)'", help: help)
        }
        return await command.run(Array(arguments.dropFirst()))
    }

    /// Whether the arguments ask for help; prints it if so.
    static func printsHelp(_ arguments: [String]) -> Bool {
        // Only before `--`: after it, `--help` is an argument (a prompt, a file name).
        let options = arguments.prefix { $0 != "--" }
        guard options.contains("-h") || options.contains("--help") else { return false }
        Console.out(help.text)
        return true
    }

    /// The Markdown reference of this command and everything under it: for each command that runs, a
    /// heading, its overview, its usage line, its arguments and options.
    static func reference() -> String {
        guard subcommands.isEmpty else { return subcommands.map { $0.reference() }.joined() }
        var text = "### `codexctl \(help.command)`\n\n\(help.overview)\n\n```\n\(help.usage)\n```\n"
        let rows = help.arguments.map { ("`\($0.0)`", $0.1) } + help.options.map { ("`\($0.label)`", $0.fullSummary) }
        if !rows.isEmpty {
            text += "\n" + rows.map { "- \($0.0): \($0.1)" }.joined(separator: "\n") + "\n"
        }
        return text + "\n"
    }

    /// Finds the command at a path such as `["schema", "validate"]`.
    static func find(_ path: ArraySlice<String>) -> (any CLICommand.Type)? {
        guard let first = path.first else { return self }
        guard let next = (subcommands + aliasedSubcommands).first(where: { $0.name == first }) else { return nil }
        return next.find(path.dropFirst())
    }
}

extension CLICommand {
    /// The shared run of a leaf command: help, parse by the options ``help`` declares, check `validate`
    /// (usage mistakes throw ``UsageError``), then run `body`. Usage errors exit 64 before anything
    /// happens; any other error is reported by ``CLIFailure`` (as JSON on stdout with `--json`) and exits 1.
    static func runParsed(
        _ arguments: [String], validate: (ParsedArguments) throws -> Void = { _ in }, _ body: (ParsedArguments) async throws -> Void
    ) async -> Int32 {
        if printsHelp(arguments) { return Console.Status.success }
        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments(arguments, for: help)
            try validate(parsed)
        } catch {
            return Console.usageFailure((error as? UsageError)?.message ?? "invalid arguments", help: help)
        }
        do {
            try await body(parsed)
            return Console.Status.success
        } catch let error as UsageError {
            return Console.usageFailure(error.message, help: help)
        } catch is CLIFailure.Reported {
            return Console.Status.failure
        } catch {
            CLIFailure(error).report(json: parsed.has("--json"))
            return Console.Status.failure
        }
    }

    /// Parses by the options ``help`` declares and checks `validate`; on a usage mistake prints it and
    /// returns `nil` (the caller exits 64).
    static func parse(_ arguments: [String], validate: (ParsedArguments) throws -> Void = { _ in }) -> ParsedArguments? {
        do {
            let parsed = try ParsedArguments(arguments, for: help)
            try validate(parsed)
            return parsed
        } catch {
            _ = Console.usageFailure((error as? UsageError)?.message ?? "invalid arguments", help: help)
            return nil
        }
    }
}
