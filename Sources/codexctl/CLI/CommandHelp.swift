/// One option of a command, declared once: parsing, the usage line and the help page all come from it.
struct CLIOption {
    /// The option's name, e.g. `--db`.
    let name: String
    /// The value's placeholder (`path` shows as `<path>`); `nil` for a flag.
    let placeholder: String?
    /// One line of help.
    let summary: String
    /// Whether it may be given several times (every value is kept, in order).
    let isRepeatable: Bool
    /// Whether the command refuses to run without it.
    let isRequired: Bool
    /// Other spellings the parser takes for it (`-m` for `--model`), shown before the name in help.
    var aliases: [String] = []
    /// The values shell completion offers for it (`--effort`: `low`, `high`, …); empty when the value is
    /// free (a number, an ID) or a path, which the placeholder says.
    var suggestions: [String] = []

    /// A flag (no value).
    static func flag(_ name: String, _ summary: String) -> CLIOption {
        CLIOption(name: name, placeholder: nil, summary: summary, isRepeatable: false, isRequired: false)
    }

    /// An option with a value.
    static func value(_ name: String, _ placeholder: String, _ summary: String, required: Bool = false, repeatable: Bool = false) -> CLIOption {
        CLIOption(name: name, placeholder: placeholder, summary: summary, isRepeatable: repeatable, isRequired: required)
    }

    /// The same option, also spelled `aliases` (a short form such as `-m`, or another tool's name for it).
    func aliased(_ aliases: String...) -> CLIOption {
        var option = self
        option.aliases = aliases
        return option
    }

    /// The same option, with the values shell completion offers for it.
    func suggesting(_ values: [String]) -> CLIOption {
        var option = self
        option.suggestions = values
        return option
    }

    /// `--db <path>`.
    var label: String { placeholder.map { "\(name) <\($0)>" } ?? name }

    /// The summary, with the other spellings: `The model. Also -m.`
    var fullSummary: String {
        summary + (aliases.isEmpty ? "" : " Also " + aliases.joined(separator: ", ") + ".") + (isRepeatable ? " Repeatable." : "")
    }

    /// How the usage line shows it: `--db <path>`, `[--json]`, `[--image <file>]...`.
    var synopsis: String {
        if isRequired { return label }
        return "[\(label)]" + (isRepeatable ? "..." : "")
    }
}

/// The help page of one command, printed in the OVERVIEW / USAGE / ARGUMENTS / OPTIONS / SUBCOMMANDS
/// layout of Swift's argument-parser tools. The usage line is built from the options and arguments, so
/// no option is written twice.
struct CommandHelp {
    /// The command's words after `codexctl` (`threads show`); empty for `codexctl` itself.
    var command: String
    var overview: String
    var arguments: [(String, String)] = []
    /// How the usage line shows the positional arguments (default: their names, in order).
    var argumentSynopsis: String?
    var options: [CLIOption] = []
    var subcommands: [(String, String)] = []

    /// `codexctl threads show <thread-id> --db <path> [--json]`.
    var usage: String {
        var words = ["codexctl"]
        if !command.isEmpty { words.append(command) }
        if !subcommands.isEmpty { words.append("<subcommand>") }
        if let positional = argumentSynopsis ?? (arguments.isEmpty ? nil : arguments.map(\.0).joined(separator: " ")) {
            words.append(positional)
        }
        words += options.filter(\.isRequired).map(\.synopsis)
        words += options.filter { !$0.isRequired }.map(\.synopsis)
        return words.joined(separator: " ")
    }

    var text: String {
        var lines = ["OVERVIEW: \(overview)", "", "USAGE: \(usage)"]
        if !arguments.isEmpty {
            lines += ["", "ARGUMENTS:"] + Self.table(arguments)
        }
        let allOptions = options.map { ($0.label, $0.fullSummary) } + [("-h, --help", "Show help information.")]
        lines += ["", "OPTIONS:"] + Self.table(allOptions)
        if !subcommands.isEmpty {
            lines += ["", "SUBCOMMANDS:"] + Self.table(subcommands)
            lines += ["", "  See 'codexctl help <subcommand>' for detailed help."]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func table(_ rows: [(String, String)]) -> [String] {
        let width = min(28, (rows.map(\.0.count).max() ?? 0) + 2)
        return rows.map { name, summary in
            let padded = name.count + 2 <= width ? name + String(repeating: " ", count: width - name.count) : name + "  "
            return "  " + padded + summary
        }
    }
}
