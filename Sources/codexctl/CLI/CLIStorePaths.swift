import Foundation

/// Where `codexctl` keeps its stores when no `--db` names one, and how a `--db` value is read: every
/// command that takes `--db` defaults to the same files, the ones `send` and `chat` write.
enum CLIStorePaths {
    /// `$XDG_STATE_HOME/codexkit`, else `~/.local/state/codexkit`. A relative `XDG_STATE_HOME` is ignored,
    /// as the XDG Base Directory specification says (a store must not depend on the directory a command
    /// happens to run in).
    static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let state = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.local/state")
        return state + "/codexkit"
    }

    /// The runtime state store `send` and `chat` keep threads in.
    static func stateDatabase(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        directory(environment: environment) + "/state.sqlite"
    }

    /// The memory store the `memory` commands read by default.
    static func memoryDatabase(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        directory(environment: environment) + "/memory.sqlite"
    }

    /// The `--db` value (a SQLite path, or a PostgreSQL connection URL or string), or `fallback` without
    /// one. Any other URL (`file:…`, `mysql://…`) is refused without being echoed (it may hold a
    /// password): it would otherwise become a file under a directory named after its scheme.
    static func database(_ option: String?, fallback: String) throws(UsageError) -> String {
        guard let option else { return fallback }
        if let scheme = urlScheme(option), scheme != "postgres", scheme != "postgresql" {
            throw UsageError("--db takes a SQLite file path or a PostgreSQL connection URL; a \(scheme): URL is not a store this build can open")
        }
        return option
    }

    /// Whether a value is a libpq keyword/value connection string (`host=db user=app password=…`): its
    /// words are `keyword=value` pairs and one of them is a connection keyword.
    static func isConnectionString(_ value: String) -> Bool {
        let keywords: Set<String> = ["host", "hostaddr", "port", "dbname", "user", "password", "passfile", "sslmode", "service", "options", "connect_timeout"]
        let words = value.split(separator: " ", omittingEmptySubsequences: true)
        return !words.isEmpty && words.contains { word in
            guard let equals = word.firstIndex(of: "=") else { return false }
            return keywords.contains(word[..<equals].lowercased())
        }
    }

    /// The scheme of a value that looks like a URL (`scheme:` followed by `//`, or a database scheme).
    static func urlScheme(_ value: String) -> String? {
        guard let colon = value.firstIndex(of: ":") else { return nil }
        let scheme = value[..<colon]
        guard let first = scheme.first, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) }) else { return nil }
        let rest = value[value.index(after: colon)...]
        let known = ["postgres", "postgresql", "file", "sqlite", "mysql"].contains(scheme.lowercased())
        return rest.hasPrefix("//") || known ? String(scheme.lowercased()) : nil
    }
}
