import CodexSchema
import Foundation

/// Builds unsigned JWTs with chosen claims for tests.
enum TestJWT {
    static func make(_ claims: JSONValue) -> String {
        func encode(_ value: JSONValue) -> String {
            Data(value.canonicalBytes()).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        return encode(["alg": "none", "typ": "JWT"]) + "." + encode(claims) + ".c2ln"
    }

    static func idToken(account: String, plan: String = "plus", email: String = "ada@example.com") -> String {
        make([
            "email": .string(email),
            "https://api.openai.com/auth": ["chatgpt_account_id": .string(account), "chatgpt_plan_type": .string(plan), "chatgpt_user_id": "user-1"],
        ])
    }

    static func accessToken(expiresAt: TimeInterval, marker: String) -> String {
        make(["exp": .number(JSONNumber(Int64(expiresAt))), "jti": .string(marker)])
    }
}

/// A fresh temporary directory.
func temporaryDirectory(_ name: String = "codexkit") throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
