import CodexCore
import CodexStoragePostgres
import Foundation

/// Where `codexctl` keeps its stores when no `--db` names one, and how a `--db` value is read: every
/// command that takes `--db` defaults to the same files, the ones `send` and `chat` write.
enum CLIStorePaths {
    /// `$XDG_STATE_HOME/codexkit`, else `~/.local/state/codexkit`. A relative `XDG_STATE_HOME` is ignored,
    /// as the XDG Base Directory specification says (a store must not depend on the directory a command
    /// happens to run in).
    static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let state = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (UserHome.path(environment) + "/.local/state")
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
    /// one. Anything else that reads as a URL or a `scheme:` address (`file:…`, `mysql://…`,
    /// `postgres:host`, `user:password@host`, a URL with spaces before it; see ``looksLikeURL(_:)``) is
    /// refused without being echoed, since it may hold a password: taken as a path, it would become a
    /// file named after it. Such a name that really is a SQLite file is given as `./name`.
    static func database(_ option: String?, fallback: String) throws(UsageError) -> String {
        guard let option else { return fallback }
        if PostgresRuntimeStateStore.isConnectionURL(option) { return option }
        if looksLikeURL(option) {
            throw UsageError(
                "--db takes a SQLite file path or a PostgreSQL connection URL (postgres://… or postgresql://…); this value reads as another kind of URL or address and is not shown (it may hold a password); a file whose name starts with a word and a colon is given as ./name"
            )
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

    /// Whether `value` reads as a URL or a `scheme:` address rather than a file path: after any spaces
    /// or tabs, an ASCII letter, then letters, digits, `+`, `-` or `.`, then a colon, and then `//`, an
    /// `@` (credentials: `user:secret@host`), or a scheme of a database or a network service
    /// (`postgres:host`). A file name such as `backup-2026-12-06T10:00.sqlite` is none of these.
    static func looksLikeURL(_ value: String) -> Bool {
        let trimmed = value.drop { $0 == " " || $0 == "\t" }
        guard let colon = trimmed.firstIndex(of: ":") else { return false }
        let scheme = trimmed[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) }) else { return false }
        let rest = trimmed[trimmed.index(after: colon)...]
        return rest.hasPrefix("//") || rest.contains("@") || knownSchemes.contains(scheme.lowercased())
    }

    /// Schemes that name a database or a network service rather than a file.
    private static let knownSchemes: Set<String> = [
        "postgres", "postgresql", "file", "sqlite", "sqlite3", "mysql", "mariadb", "redis", "rediss", "mongodb", "mongodb+srv",
        "http", "https", "ftp", "sftp", "ssh", "jdbc", "mailto", "s3", "gs", "tcp", "unix",
    ]
}
