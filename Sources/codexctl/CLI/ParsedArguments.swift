/// A command line split into flags, options with values, and positional arguments.
///
/// Accepts `--name value`, `--name=value`, an option's aliases (`-m value`) and `--` (everything after
/// it is positional). A lone `-` is positional (standard input). A value given as the next word may not
/// be one of the command's option names (`--db --json` forgot the value): such a value is written inline.
struct ParsedArguments {
    private(set) var flags: Set<String> = []
    private(set) var options: [String: String] = [:]
    /// Every value of each option in `repeatable`, in order.
    private(set) var lists: [String: [String]] = [:]
    private(set) var positionals: [String] = []

    /// Parses `arguments`, treating names in `valueOptions` as options that take a value. An option or
    /// flag given twice is a usage error, except the options in `repeatable` (see ``lists``).
    private init(
        _ arguments: [String], flags knownFlags: Set<String>, valueOptions: Set<String>, repeatable: Set<String>, aliases: [String: String]
    ) throws(UsageError) {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            name = aliases[name] ?? name
            if knownFlags.contains(name) {
                guard inlineValue == nil else { throw UsageError("'\(name)' takes no value") }
                guard flags.insert(name).inserted else { throw UsageError("'\(name)' given twice") }
            } else if valueOptions.contains(name) || repeatable.contains(name) {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError("Missing value for '\(name)'") }
                    value = arguments[index]
                    // `--db --json` is a forgotten value, not a database named `--json`; a value that
                    // really is an option's name is given inline (`--db=--json`).
                    let next = value.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? value
                    let nextName = aliases[next] ?? next
                    if next.hasPrefix("-"), knownFlags.contains(nextName) || valueOptions.contains(nextName) || repeatable.contains(nextName) {
                        throw UsageError("Missing value for '\(name)' ('\(next)' is an option; a value that is an option's name is written '\(name)=\(next)')")
                    }
                    index += 1
                }
                if repeatable.contains(name) {
                    lists[name, default: []].append(value)
                } else {
                    guard options.updateValue(value, forKey: name) == nil else { throw UsageError("'\(name)' given twice") }
                }
            } else {
                throw UsageError("Unknown option '\(name)'")
            }
        }
    }

    /// Parses `arguments` with the options `help` declares; a missing required option is a usage error.
    init(_ arguments: [String], for help: CommandHelp) throws(UsageError) {
        let options = help.options
        try self.init(
            arguments, flags: Set(options.filter { $0.placeholder == nil }.map(\.name)),
            valueOptions: Set(options.filter { $0.placeholder != nil && !$0.isRepeatable }.map(\.name)),
            repeatable: Set(options.filter(\.isRepeatable).map(\.name)),
            aliases: Dictionary(options.flatMap { option in option.aliases.map { ($0, option.name) } }, uniquingKeysWith: { first, _ in first })
        )
        for option in options where option.isRequired && self.options[option.name] == nil {
            throw UsageError("\(option.label) is required")
        }
    }

    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// Refuses positional arguments (for commands that take none).
    func expectNoPositionals() throws(UsageError) {
        if let first = positionals.first { throw UsageError("Unexpected argument '\(first)'") }
    }
}

/// A command-line usage mistake: printed as `Error: …` plus the usage line, exit status 64.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
