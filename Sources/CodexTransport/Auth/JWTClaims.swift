import CodexCore
import CodexSchema
import Foundation

/// Reads the payload of a JWT (no signature check: the tokens come from the issuer over TLS and are only
/// used to learn the account, plan and expiry).
enum JWTClaims {
    /// The decoded payload object, or `nil` when the token is not a JWT with a JSON object payload.
    static func payload(_ token: String) -> JSONValue? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(String(parts[1])),
              let value = try? JSONValue(parsing: bytes, options: .init(maximumDepth: 32, maximumBytes: 256 * 1024)),
              case .object = value else { return nil }
        return value
    }
}

/// Base64url without padding (RFC 4648 §5), as used in JWTs.
enum Base64URL {
    static func decode(_ text: String) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { [UInt8]($0) }
    }

    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
