private import CLibPQ
import Foundation

/// How the store's connections are made: the host's connection string (a `postgresql://` URL or libpq's
/// `key=value` form; empty means libpq's environment variables and defaults), the schema the store's
/// tables live in, and whether connections are read-only.
struct PostgresConnectionSettings: Sendable {
    let connectionString: String
    let schema: String?
    let readOnly: Bool
    let applicationName: String
    /// The password and any other secret the connection string holds, to be kept out of every error.
    let secrets: [String]

    /// Reads `connectionString` with libpq's own parser.
    /// - Throws: ``PostgresStoreError`` `postgres_invalid_connection_string` (naming libpq's reason,
    ///   never the string).
    init(connectionString: String, schema: String?, readOnly: Bool, applicationName: String = "codexkit") throws(PostgresStoreError) {
        var secrets: [String] = []
        if !connectionString.isEmpty {
            var error: UnsafeMutablePointer<CChar>?
            guard let options = PQconninfoParse(connectionString, &error) else {
                let reason = error.map { String(cString: $0) } ?? "unreadable"
                if let error { PQfreemem(error) }
                let line = reason.split(whereSeparator: \.isNewline).first.map(String.init) ?? reason
                throw PostgresStoreError(
                    code: .invalidConnectionString,
                    message: "libpq cannot read the connection string: "
                        + Self.withoutQuotedParts(PostgresConnection.redact(line, secrets: [connectionString] + Self.rawPasswords(in: connectionString)))
                )
            }
            defer { PQconninfoFree(options) }
            var option = options
            while let keyword = option.pointee.keyword {
                let name = String(cString: keyword)
                if ["password", "sslpassword"].contains(name), let value = option.pointee.val {
                    let secret = String(cString: value)
                    secrets.append(secret)
                    // A URL carries the password percent-encoded: keep that form out of errors too.
                    if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics), encoded != secret { secrets.append(encoded) }
                }
                option += 1
            }
        }
        self.connectionString = connectionString
        self.schema = schema
        self.readOnly = readOnly
        self.applicationName = applicationName
        self.secrets = secrets
    }

    /// libpq's reason with each quoted part (the token it could not read: part of a password, say)
    /// replaced by `***`, whatever quotation marks its language uses (`"…"`, `«…»`, `»…«`, `„…“`); a
    /// part that is one of libpq's connection keywords or a single punctuation mark (`missing "=" after`)
    /// is kept, and an unclosed quote's rest is cut off.
    static func withoutQuotedParts(_ reason: String) -> String {
        let marks: Set<Character> = ["\"", "«", "»", "„", "“", "”", "‚", "‘", "「", "」", "『", "』"]
        var result = ""
        var rest = Substring(reason)
        while let open = rest.firstIndex(where: { marks.contains($0) }) {
            result += rest[...open]
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(where: { marks.contains($0) }) else { return result + "***" }
            let quoted = rest[afterOpen..<close].trimmingCharacters(in: .whitespaces)
            let harmless = keywords.contains(quoted.lowercased()) || (quoted.count == 1 && quoted.allSatisfy { $0.isPunctuation || $0.isSymbol })
            result += harmless ? String(rest[afterOpen..<close]) : "***"
            result.append(rest[close])
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    /// libpq's connection keywords: a quoted keyword names an option, never a value.
    private static let keywords: Set<String> = [
        "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "channel_binding", "connect_timeout", "client_encoding",
        "options", "application_name", "fallback_application_name", "keepalives", "sslmode", "sslcert", "sslkey", "sslrootcert",
        "sslcrl", "requiressl", "sslcompression", "service", "target_session_attrs", "gssencmode", "krbsrvname", "sslpassword",
    ]

    /// The password as the connection string spells it (a URL's user information after its colon, or a
    /// `password=` value), undecoded: libpq may quote it in its own words when it cannot read it.
    static func rawPasswords(in connectionString: String) -> [String] {
        var found: [String] = []
        if let scheme = connectionString.range(of: "://") {
            let afterScheme = connectionString[scheme.upperBound...]
            let authority = afterScheme.prefix { $0 != "/" && $0 != "?" }
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                found.append(String(authority[authority.index(after: colon)..<at]))
            }
        }
        var rest = Substring(connectionString)
        while let key = rest.range(of: "password=", options: .caseInsensitive) {
            let value = rest[key.upperBound...].prefix { $0 != "&" && $0 != " " && $0 != "\t" }
            found.append(String(value.trimmingCharacters(in: CharacterSet(charactersIn: "'\""))))
            rest = rest[key.upperBound...]
        }
        return found.filter { !$0.isEmpty }
    }
}
