/// Every command path with its subcommands, its options, the options that take a value, and what each
/// value and positional argument completes to.
struct CompletionTable {
    /// What a word completes to: fixed words, file names, or directory names.
    enum Candidates: Equatable {
        case words([String])
        case files
        case directories

        /// The form the scripts read: the words, or `@files` / `@dirs`.
        var spec: String {
            switch self {
            case .words(let words): words.joined(separator: " ")
            case .files: "@files"
            case .directories: "@dirs"
            }
        }

        /// An option's values: its suggestions, else files or directories when its placeholder names a
        /// path; `nil` for a free value (a number, an ID, a URL), which nothing completes.
        init?(_ option: CLIOption) {
            if !option.suggestions.isEmpty {
                self = .words(option.suggestions)
            } else {
                switch option.placeholder {
                case "path", "path|url", "file", "schema": self = .files
                case "dir": self = .directories
                default: return nil
                }
            }
        }

        /// A command's first positional argument, by its name in the help page.
        init?(argument: String) {
            switch argument {
            case "<file>", "<instance>", "<schema>", "<path>": self = .files
            case "<directory>": self = .directories
            case "<shell>": self = .words(["bash", "zsh", "fish"])
            default: return nil
            }
        }
    }

    struct Entry {
        /// The words after `codexctl` (`""` for the root, `threads list`).
        let path: String
        let children: [String]
        let options: [String]
        let valueOptions: [String]
        /// What each value option's value completes to (options whose value is free are left out).
        let values: [(option: String, candidates: Candidates)]
        /// What a positional argument completes to, for a command without subcommands.
        let positional: Candidates?
    }

    private(set) var entries: [Entry] = []

    init(root: any CLICommand.Type) {
        add(root, path: "")
        // `help` is the root's word, not a command: it takes a command's name, `errors` or `--markdown`.
        let commands = root.subcommands.map { $0.name }
        entries.append(Entry(path: "help", children: commands + ["errors"], options: ["--markdown"], valueOptions: [], values: [], positional: nil))
        // `help threads …` walks the same groups (`help login status` too).
        for entry in entries where !entry.path.isEmpty && entry.path != "help" && !entry.children.isEmpty {
            entries.append(Entry(path: "help " + entry.path, children: entry.children, options: [], valueOptions: [], values: [], positional: nil))
        }
    }

    private mutating func add(_ command: any CLICommand.Type, path: String) {
        let subcommands = command.subcommands + command.aliasedSubcommands
        var children = subcommands.map { $0.name }
        if path.isEmpty { children.append("help") }
        let options = command.help.options.flatMap { [$0.name] + $0.aliases } + ["--help", "-h"]
        let valueOptions = command.help.options.filter { $0.placeholder != nil }
        let values = valueOptions.flatMap { option in
            Candidates(option).map { candidates in ([option.name] + option.aliases).map { (option: $0, candidates: candidates) } } ?? []
        }
        let positional = subcommands.isEmpty ? command.help.arguments.first.flatMap { Candidates(argument: $0.0) } : nil
        entries.append(Entry(
            path: path, children: children, options: options, valueOptions: valueOptions.flatMap { [$0.name] + $0.aliases }, values: values,
            positional: positional
        ))
        for child in subcommands {
            add(child, path: path.isEmpty ? child.name : path + " " + child.name)
        }
    }

    /// Shell `case` arms printing one field of every entry, keyed by `key`: `"path") echo "a b c" ;;`
    /// (`print` for zsh), or fish's `case "path"` followed by the words, one per line.
    func cases(_ rows: [(key: String, words: String)], shell: String) -> String {
        var lines: [String] = []
        for row in rows {
            switch shell {
            case "fish":
                lines.append("        case \"" + row.key + "\"")
                lines.append("            string split -n ' ' -- \"" + row.words + "\"")
            case "zsh":
                lines.append("    \"" + row.key + "\") print -r -- \"" + row.words + "\" ;;")
            default:
                lines.append("    \"" + row.key + "\") echo \"" + row.words + "\" ;;")
            }
        }
        return lines.joined(separator: "\n")
    }

    func rows(_ field: KeyPath<Entry, [String]>) -> [(key: String, words: String)] {
        entries.map { (key: $0.path, words: $0[keyPath: field].joined(separator: " ")) }
    }

    /// `path|option` → what the option's value completes to.
    var valueRows: [(key: String, words: String)] {
        entries.flatMap { entry in entry.values.map { (key: entry.path + "|" + $0.option, words: $0.candidates.spec) } }
    }

    /// `path` → what its positional argument completes to.
    var positionalRows: [(key: String, words: String)] {
        entries.compactMap { entry in entry.positional.map { (key: entry.path, words: $0.spec) } }
    }

    /// The lookups bash and zsh share, each a shell function over one `case`: a command path's
    /// subcommands, its options, the options that take a value, what a value completes to (by
    /// `path|option`), and what a positional argument completes to.
    func lookupFunctions(shell: String) -> String {
        """
        _codexctl_children() { case "$1" in
        \(cases(rows(\Entry.children), shell: shell))
        esac; }
        _codexctl_options() { case "$1" in
        \(cases(rows(\Entry.options), shell: shell))
        esac; }
        _codexctl_values() { case "$1" in
        \(cases(rows(\Entry.valueOptions), shell: shell))
        esac; }
        _codexctl_value() { case "$1" in
        \(cases(valueRows, shell: shell))
        esac; }
        _codexctl_positional() { case "$1" in
        \(cases(positionalRows, shell: shell))
        esac; }
        """
    }
}
