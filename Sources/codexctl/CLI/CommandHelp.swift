/// The help page of one command, printed in the OVERVIEW / USAGE / ARGUMENTS / OPTIONS / SUBCOMMANDS
/// layout of Swift's argument-parser tools.
struct CommandHelp {
    var overview: String
    var usage: String
    var arguments: [(String, String)] = []
    var options: [(String, String)] = []
    var subcommands: [(String, String)] = []

    var text: String {
        var lines = ["OVERVIEW: \(overview)", "", "USAGE: \(usage)"]
        if !arguments.isEmpty {
            lines += ["", "ARGUMENTS:"] + Self.table(arguments)
        }
        let allOptions = options + [("-h, --help", "Show help information.")]
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
