public import CodexSchema
public import Foundation

/// Builds unsigned JWTs with chosen claims for tests.
public enum TestJWT {
    /// `header.payload.signature` with `claims` as the payload.
    public static func make(_ claims: JSONValue) -> String {
        func encode(_ value: JSONValue) -> String {
            Data(value.canonicalBytes()).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        return encode(["alg": "none", "typ": "JWT"]) + "." + encode(claims) + ".c2ln"
    }

    /// An ID token naming a ChatGPT account.
    public static func idToken(account: String, plan: String = "plus", email: String = "ada@example.com") -> String {
        make([
            "email": .string(email),
            "https://api.openai.com/auth": ["chatgpt_account_id": .string(account), "chatgpt_plan_type": .string(plan), "chatgpt_user_id": "user-1"],
        ])
    }

    /// An access token expiring at `expiresAt` (seconds since 1970).
    public static func accessToken(expiresAt: TimeInterval, marker: String) -> String {
        make(["exp": .number(JSONNumber(Int64(expiresAt))), "jti": .string(marker)])
    }
}
