@testable import CodexStoragePostgres
import Testing

/// What of libpq's reason for refusing a connection string may be shown: never a token of a value (a
/// password), in any language's quotation marks; the keywords and punctuation that say what is wrong.
@Suite struct PostgresConnectionSettingsTests {
    @Test(arguments: [
        (#"invalid percent-encoded token: "S3CRE%ZZ""#, #"invalid percent-encoded token: "***""#),
        ("ungültiges Prozent-kodiertes Token: »S3CRE%ZZ«", "ungültiges Prozent-kodiertes Token: »***«"),
        ("jeton encodé en pourcentage invalide : « S3CRE%ZZ »", "jeton encodé en pourcentage invalide : «***»"),
        ("token codificado con porcentaje no válido: «S3CRE%ZZ»", "token codificado con porcentaje no válido: «***»"),
        ("ungültig: „S3CRE%ZZ“", "ungültig: „***“"),
        (#"missing "=" after "S3CRE" in connection info string"#, #"missing "=" after "***" in connection info string"#),
        (#"invalid sslmode value: "S3CRE""#, #"invalid sslmode value: "***""#),
        (#"invalid connection option "sslmode""#, #"invalid connection option "sslmode""#),
        (#"unterminated "S3CRE"#, #"unterminated "***"#),
        ("no quotes at all", "no quotes at all"),
    ])
    func quotedValuesAreHiddenInEveryLanguage(_ reason: String, _ shown: String) {
        #expect(PostgresConnectionSettings.withoutQuotedParts(reason) == shown)
    }

    @Test func thePasswordIsFoundAsTheStringSpellsIt() {
        #expect(PostgresConnectionSettings.rawPasswords(in: "postgresql://u:S3CRE%ZZ@127.0.0.1:1/x") == ["S3CRE%ZZ"])
        #expect(PostgresConnectionSettings.rawPasswords(in: "postgres://u:p%40ss:word@h/db?password=S3CRE&sslmode=require") == ["p%40ss:word", "S3CRE"])
        #expect(PostgresConnectionSettings.rawPasswords(in: "host=db PASSWORD='S3CRE unclosed") == ["S3CRE"])
        #expect(PostgresConnectionSettings.rawPasswords(in: "postgresql://u@h/db").isEmpty)
        #expect(PostgresConnectionSettings.rawPasswords(in: "postgresql:///db?host=/tmp").isEmpty)
    }
}
