import CodexCore
public import Foundation

/// Authenticates with an API key (the public API profile). No refresh, no 401 recovery.
public struct APIKeyAuthProvider: AuthProvider {
    private let apiKey: String

    /// Uses `apiKey`.
    public init(apiKey: String) {
        self.apiKey = apiKey
    }

    /// Uses the `OPENAI_API_KEY` environment variable, or `nil` when it is unset or empty.
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let key = environment["OPENAI_API_KEY"], !key.isEmpty else { return nil }
        self.init(apiKey: key)
    }

    /// The key as a bearer token, bound to the first 16 hex digits of its SHA-256.
    public func credentials() async throws -> AuthCredentials {
        AuthCredentials(bearerToken: apiKey, binding: "api-key:" + String(SHA256.hexDigest(of: Array(apiKey.utf8)).prefix(16)))
    }

    /// The key's binding.
    public func currentBinding() async -> String? { try? await credentials().binding }

    /// `nil`: a rejected key cannot be renewed.
    public func recoverAfterUnauthorized(_ rejected: AuthCredentials) async throws -> AuthCredentials? { nil }
}
