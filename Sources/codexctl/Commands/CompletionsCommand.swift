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
    private func cases(_ rows: [(key: String, words: String)], shell: String) -> String {
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

    private func rows(_ field: KeyPath<Entry, [String]>) -> [(key: String, words: String)] {
        entries.map { (key: $0.path, words: $0[keyPath: field].joined(separator: " ")) }
    }

    /// `path|option` → what the option's value completes to.
    private var valueRows: [(key: String, words: String)] {
        entries.flatMap { entry in entry.values.map { (key: entry.path + "|" + $0.option, words: $0.candidates.spec) } }
    }

    /// `path` → what its positional argument completes to.
    private var positionalRows: [(key: String, words: String)] {
        entries.compactMap { entry in entry.positional.map { (key: entry.path, words: $0.spec) } }
    }

    /// The lookups bash and zsh share, each a shell function over one `case`: a command path's
    /// subcommands, its options, the options that take a value, what a value completes to (by
    /// `path|option`), and what a positional argument completes to.
    private func lookupFunctions(shell: String) -> String {
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

    /// The bash script: `complete -F _codexctl codexctl`. Path candidates go through `compopt -o
    /// filenames` (a directory gets its `/`, a name with spaces stays one word).
    func bash() -> String {
        """
        # bash completion for codexctl (generated by `codexctl completions bash`)
        \(lookupFunctions(shell: "bash"))
        _codexctl_offer() {
            case "$1" in
            @files) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$2") ;;
            @dirs) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$2") ;;
            *) mapfile -t COMPREPLY < <(compgen -W "$1" -- "$2") ;;
            esac
        }
        _codexctl() {
            local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmdpath="" word skip=0 i
            COMPREPLY=()
            # `--option=value`: bash splits at `=`, so the option is the word before it.
            if [[ $cur == "=" ]]; then
                cur="" prev="${COMP_WORDS[COMP_CWORD-1]}"
            elif [[ $prev == "=" && $COMP_CWORD -gt 2 ]]; then
                prev="${COMP_WORDS[COMP_CWORD-2]}"
            fi
            for ((i = 1; i < COMP_CWORD; i++)); do
                word="${COMP_WORDS[i]}"
                if [[ $skip == 1 ]]; then skip=0; continue; fi
                [[ $word == "=" ]] && continue
                if [[ $word == -* ]]; then
                    [[ " $(_codexctl_values "$cmdpath") " == *" $word "* && ${COMP_WORDS[i+1]} != "=" ]] && skip=1
                    [[ ${COMP_WORDS[i+1]} == "=" ]] && skip=2
                    continue
                fi
                if [[ $skip == 2 ]]; then skip=0; continue; fi
                [[ " $(_codexctl_children "$cmdpath") " == *" $word "* ]] && cmdpath="${cmdpath:+$cmdpath }$word"
            done
            if [[ $COMP_CWORD -gt 1 && $prev == -* && " $(_codexctl_values "$cmdpath") " == *" $prev "* ]]; then
                _codexctl_offer "$(_codexctl_value "$cmdpath|$prev")" "$cur"
            elif [[ $cur == -* ]]; then
                _codexctl_offer "$(_codexctl_options "$cmdpath")" "$cur"
            elif [[ -n $(_codexctl_children "$cmdpath") ]]; then
                _codexctl_offer "$(_codexctl_children "$cmdpath")" "$cur"
            else
                _codexctl_offer "$(_codexctl_positional "$cmdpath")" "$cur"
            fi
        }
        complete -F _codexctl codexctl

        """
    }

    /// The zsh script, for a file named `_codexctl` on `$fpath` (or sourced after `compinit`).
    func zsh() -> String {
        """
        #compdef codexctl
        # zsh completion for codexctl (generated by `codexctl completions zsh`)
        \(lookupFunctions(shell: "zsh"))
        _codexctl_offer() {
            case "$1" in
            @files) _files ;;
            @dirs) _files -/ ;;
            *) compadd -- ${=1} ;;
            esac
        }
        _codexctl() {
            local cmdpath="" word skip=0 i option=""
            for ((i = 2; i < CURRENT; i++)); do
                word="${words[i]}"
                if [[ $skip == 1 ]]; then skip=0; continue; fi
                if [[ $word == -* ]]; then
                    [[ $word != *=* && " $(_codexctl_values "$cmdpath") " == *" $word "* ]] && skip=1
                    continue
                fi
                [[ " $(_codexctl_children "$cmdpath") " == *" $word "* ]] && cmdpath="${cmdpath:+$cmdpath }$word"
            done
            if [[ ${words[CURRENT]} == -*=* ]]; then
                # `--option=value`: the part before `=` is kept as it is; the value completes.
                option="${words[CURRENT]%%=*}"
                compset -P '*='
            elif (( CURRENT > 2 )) && [[ ${words[CURRENT-1]} == -* ]]; then
                option="${words[CURRENT-1]}"
            fi
            if [[ -n $option && " $(_codexctl_values "$cmdpath") " == *" $option "* ]]; then
                _codexctl_offer "$(_codexctl_value "$cmdpath|$option")"
            elif [[ ${words[CURRENT]} == -* ]]; then
                _codexctl_offer "$(_codexctl_options "$cmdpath")"
            elif [[ -n $(_codexctl_children "$cmdpath") ]]; then
                _codexctl_offer "$(_codexctl_children "$cmdpath")"
            else
                _codexctl_offer "$(_codexctl_positional "$cmdpath")"
            fi
        }
        if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
            _codexctl "$@"
        else
            compdef _codexctl codexctl
        fi

        """
    }

    /// The fish script, for `~/.config/fish/completions/codexctl.fish`.
    func fish() -> String {
        """
        # fish completion for codexctl (generated by `codexctl completions fish`)
        function __codexctl_children
            switch "$argv[1]"
        \(cases(rows(\Entry.children), shell: "fish"))
            end
        end
        function __codexctl_options
            switch "$argv[1]"
        \(cases(rows(\Entry.options), shell: "fish"))
            end
        end
        function __codexctl_values
            switch "$argv[1]"
        \(cases(rows(\Entry.valueOptions), shell: "fish"))
            end
        end
        function __codexctl_value
            switch "$argv[1]"
        \(cases(valueRows, shell: "fish"))
            end
        end
        function __codexctl_positional
            switch "$argv[1]"
        \(cases(positionalRows, shell: "fish"))
            end
        end
        function __codexctl_offer
            # $argv[1]: what to offer; $argv[2]: the word typed so far; $argv[3]: a prefix (`--option=`).
            switch "$argv[1]"
                case @files
                    __fish_complete_path "$argv[2]" | string replace -r '^' -- "$argv[3]"
                case @dirs
                    __fish_complete_directories "$argv[2]" | string replace -r '^' -- "$argv[3]"
                case '*'
                    for word in (string split -n ' ' -- "$argv[1]")
                        echo "$argv[3]$word"
                    end
            end
        end
        function __codexctl_candidates
            set -l tokens (commandline -opc)
            set -e tokens[1]
            set -l current (commandline -ct)
            set -l cmdpath ''
            set -l skip 0
            set -l option ''
            for word in $tokens
                if test $skip = 1
                    set skip 0
                    set option ''
                    continue
                end
                if string match -q -- '-*' $word
                    if not string match -q -- '*=*' $word; and contains -- $word (__codexctl_values "$cmdpath")
                        set skip 1
                        set option $word
                    end
                    continue
                end
                if contains -- $word (__codexctl_children "$cmdpath")
                    set cmdpath (string trim -- "$cmdpath $word")
                end
            end
            # (`string split` fails when it finds one word: the list is read, not the status.)
            set -l children (__codexctl_children "$cmdpath")
            if test $skip = 1
                __codexctl_offer (__codexctl_value "$cmdpath|$option" | string join ' ') "$current" ''
            else if string match -q -- '-*=*' $current
                set -l parts (string split -m 1 '=' -- $current)
                if contains -- $parts[1] (__codexctl_values "$cmdpath")
                    __codexctl_offer (__codexctl_value "$cmdpath|$parts[1]" | string join ' ') "$parts[2]" "$parts[1]="
                end
            else if string match -q -- '-*' $current
                __codexctl_options "$cmdpath"
            else if test (count $children) -gt 0
                for child in $children
                    echo $child
                end
            else
                __codexctl_offer (__codexctl_positional "$cmdpath" | string join ' ') "$current" ''
            end
        end
        complete -c codexctl -f -a '(__codexctl_candidates)'

        """
    }
}
