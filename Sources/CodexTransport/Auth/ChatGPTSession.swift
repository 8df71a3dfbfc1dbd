import CodexCore
import CodexSchema
public import Foundation

/// A signed-in ChatGPT session: tokens plus what their claims say about the account.
///
/// The account ID, plan, email and user come from the ID token's claims (namespace
/// `https://api.openai.com/auth`); expiry comes from the access token's `exp`. ``description`` never
/// shows a token.
public struct ChatGPTSession: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The OpenID ID token.
    public var idToken: String
    /// The bearer access token.
    public var accessToken: String
    /// The refresh token.
    public var refreshToken: String
    /// The ChatGPT account (workspace) ID, sent as `ChatGPT-Account-ID`.
    public var accountID: String
    /// The plan, e.g. `plus` (unknown plans are kept).
    public var planType: String?
    /// The account email.
    public var email: String?
    /// The user ID.
    public var userID: String?
    /// Whether the workspace is FedRAMP.
    public var isFedRAMP: Bool
    /// When the access token expires, when it says.
    public var expiresAt: Date?
    /// When the tokens were last refreshed.
    public var lastRefresh: Date?
    /// The issuer that signed the session in, when it is not OpenAI's: its refresh token is sent there
    /// and nowhere else. `nil` for OpenAI's issuer (and for sessions saved before it was recorded).
    public var issuer: URL?

    /// Builds a session from tokens, reading the claims.
    ///
    /// - Parameters:
    ///   - idToken: The ID token (a JWT).
    ///   - accessToken: The access token (a JWT, for its `exp`; opaque tokens are accepted without expiry).
    ///   - refreshToken: The refresh token.
    ///   - accountID: The account ID when known separately (as in the Codex CLI's `auth.json`); the ID
    ///     token's claim wins when both exist.
    ///   - lastRefresh: When the tokens were obtained.
    /// - Throws: ``CodexCore/AgentRuntimeError`` `not_signed_in` when no account ID can be found.
    public init(idToken: String, accessToken: String, refreshToken: String, accountID: String? = nil, lastRefresh: Date? = nil) throws {
        self.idToken = idToken
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.lastRefresh = lastRefresh
        let claims = JWTClaims.payload(idToken)
        let auth = claims?["https://api.openai.com/auth"]
        guard let account = auth?["chatgpt_account_id"]?.stringValue ?? accountID, !account.isEmpty else {
            throw AgentRuntimeError(.notSignedIn("the ID token names no ChatGPT account"))
        }
        self.accountID = account
        planType = auth?["chatgpt_plan_type"]?.stringValue
        userID = auth?["chatgpt_user_id"]?.stringValue ?? auth?["user_id"]?.stringValue
        email = claims?["email"]?.stringValue ?? claims?["https://api.openai.com/profile"]?["email"]?.stringValue
        isFedRAMP = auth?["chatgpt_account_is_fedramp"]?.boolValue ?? false
        expiresAt = JWTClaims.payload(accessToken)?["exp"]?.numberValue.map { Date(timeIntervalSince1970: $0.doubleValue) }
    }

    /// Whether the access token expires within `skew` of `now`, or the tokens are older than eight days.
    public func needsRefresh(now: Date, skew: TimeInterval = 120) -> Bool {
        if let expiresAt, expiresAt.timeIntervalSince(now) <= skew { return true }
        if let lastRefresh, now.timeIntervalSince(lastRefresh) > 8 * 86_400 { return true }
        return false
    }

    /// The request credentials.
    public var credentials: AuthCredentials {
        AuthCredentials(bearerToken: accessToken, accountID: accountID, binding: accountID, isFedRAMP: isFedRAMP, secrets: [refreshToken, idToken])
    }

    /// Log-safe: account and plan only.
    public var description: String {
        "ChatGPTSession(account: \(accountID), plan: \(planType ?? "unknown"), tokens: <redacted>)"
    }
}
