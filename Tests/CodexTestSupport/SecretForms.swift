import Foundation

/// The forms a hostile or careless server echoes a secret in: raw, another case, a piece, base64,
/// base64url, base64 of a piece at another byte alignment, URL-encoded (three ways), spaced out, split
/// by a newline, and split in halves with other text between them. Redaction tests feed each form
/// through every path a server's text can surface on.
public enum SecretForms {
    /// Each form of `secret` (at least 36 characters), named for test output.
    public static func all(of secret: String) -> [(name: String, text: String)] {
        let bytes = Data(secret.utf8)
        let base64 = bytes.base64EncodedString()
        let base64URL = base64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let urlEncoded = secret.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
        let piece = String(secret.dropFirst(5).prefix(14))
        // A piece that starts a byte in: its base64 is aligned differently from the whole secret's.
        let shiftedBase64 = Data(secret.utf8.dropFirst(4).prefix(18)).base64EncodedString()
        return [
            ("raw", secret),
            ("upper case", secret.uppercased()),
            ("a 14-character piece", piece),
            ("base64", base64),
            ("base64url", base64URL),
            ("base64 of a piece at another alignment", shiftedBase64),
            ("URL-encoded", urlEncoded),
            ("every byte URL-encoded", secret.utf8.map { String(format: "%%%02X", $0) }.joined()),
            ("lower-case URL-encoded", urlEncoded.lowercased()),
            ("spaced out", secret.map(String.init).joined(separator: " ")),
            ("split by a newline", secret.prefix(17) + "\n  " + secret.dropFirst(17)),
            (splitHalves, "first " + secret.prefix(16) + " then some words " + secret.dropFirst(16) + " end"),
        ]
    }

    /// Whether `text` still holds a run of 12 characters of `secret` or of `form`, one of its forms
    /// (any case, whitespace ignored). The form with other words between the halves is checked for
    /// the secret only (its own words are meant to stay).
    public static func leaks(_ secret: String, form: (name: String, text: String), in text: String) -> Bool {
        if leaks(secret, in: text) { return true }
        return form.name == splitHalves ? false : leaks(form.text.filter { !$0.isWhitespace }, in: text)
    }

    private static let splitHalves = "split halves with text between"

    /// Whether `text` still holds a run of 12 characters of `secret` (any case, whitespace ignored).
    public static func leaks(_ secret: String, in text: String) -> Bool {
        let squeezed = text.filter { !$0.isWhitespace }.lowercased()
        let characters = Array(secret.lowercased())
        guard characters.count >= 12 else { return squeezed.contains(secret.lowercased()) }
        return (0...(characters.count - 12)).contains { squeezed.contains(String(characters[$0..<($0 + 12)])) }
    }
}
