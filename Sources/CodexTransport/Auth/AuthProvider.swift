/// What a request is authenticated with.
///
/// ``description`` never shows the token.
public struct AuthCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The bearer token (access token or API key).
    public var bearerToken: String
    /// The ChatGPT account ID sent as `ChatGPT-Account-ID`, for ChatGPT sessions.
    public var accountID: String?
    /// What the credentials are bound to (the account ID, or a digest of the API key): state and
    /// caches are kept per binding, and a recovered session must have the same one.
    public var binding: String
    /// Whether the workspace needs `X-OpenAI-Fedramp: true`.
    public var isFedRAMP: Bool
    /// The organization sent as `OpenAI-Organization` (public API keys), if any.
    public var organization: String?
    /// The project sent as `OpenAI-Project` (public API keys), if any.
    public var project: String?
    /// Every secret behind these credentials (the bearer token, and for a ChatGPT session its refresh
    /// and ID tokens): errors are scrubbed of them before they leave the transport, whatever a server
    /// echoes back.
    public var secrets: [String]

    /// Creates credentials.
    /// - Parameter secrets: Secrets besides the bearer token to keep out of errors (a refresh token).
    public init(bearerToken: String, accountID: String? = nil, binding: String, isFedRAMP: Bool = false, secrets: [String] = []) {
        self.bearerToken = bearerToken
        self.accountID = accountID
        self.binding = binding
        self.isFedRAMP = isFedRAMP
        self.secrets = [bearerToken] + secrets
        organization = nil
        project = nil
    }

    /// Log-safe: the binding only.
    public var description: String { "AuthCredentials(binding: \(binding), token: <redacted>)" }
}

/// Supplies credentials for requests.
///
/// Implementation requirements: ``credentials()`` is cheap when nothing needs refreshing and may be
/// called concurrently; ``recoverAfterUnauthorized(_:)`` is called at most once per request after an
/// HTTP 401 and must return credentials for the same binding or `nil` (no recovery). A 403 is never
/// passed here. Tokens never appear in errors or logs.
public protocol AuthProvider: Sendable {
    /// The current credentials, refreshed first if they are about to expire.
    func credentials() async throws -> AuthCredentials
    /// New credentials after `rejected` got a 401, or `nil` when nothing better is available.
    func recoverAfterUnauthorized(_ rejected: AuthCredentials) async throws -> AuthCredentials?
    /// The binding of the current credentials without any network I/O, or `nil` when unknown (used by
    /// caches that must not trigger a refresh, such as the cached-only model catalog, and by structured
    /// recovery's account checks, which ask ``credentials()`` instead when it is `nil`).
    func currentBinding() async -> String?
}

extension AuthProvider {
    /// Unknown by default.
    public func currentBinding() async -> String? { nil }
}
