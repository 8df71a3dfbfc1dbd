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
                    message: "libpq cannot read the connection string: " + Self.withoutQuotedParts(PostgresConnection.redact(line, secrets: [connectionString]))
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

    /// libpq's reason with every quoted part (`"…"`, the token it could not read: part of a password,
    /// say) replaced by `"***"`, and an unclosed quote's rest cut off.
    static func withoutQuotedParts(_ reason: String) -> String {
        var result = ""
        var rest = Substring(reason)
        while let open = rest.firstIndex(of: "\"") {
            result += rest[..<open]
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(of: "\"") else { return result + "\"***\"" }
            result += "\"***\""
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }
}
