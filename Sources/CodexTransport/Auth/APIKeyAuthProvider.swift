import CodexCore
public import Foundation

/// Authenticates with an API key (the public API profile). No refresh, no 401 recovery.
public struct APIKeyAuthProvider: AuthProvider {
    private let apiKey: String
    private let organization: String?
    private let project: String?

    /// Uses `apiKey`, sending `organization` as `OpenAI-Organization` and `project` as `OpenAI-Project`
    /// when given.
    public init(apiKey: String, organization: String? = nil, project: String? = nil) {
        self.apiKey = apiKey
        self.organization = organization.flatMap { $0.isEmpty ? nil : $0 }
        self.project = project.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Uses the `OPENAI_API_KEY` environment variable, or `nil` when it is unset or empty, with the
    /// organization from `OPENAI_ORG_ID` (else `OPENAI_ORGANIZATION`) and the project from
    /// `OPENAI_PROJECT_ID` (else `OPENAI_PROJECT`), as openai-python and the Codex CLI read them.
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let key = environment["OPENAI_API_KEY"], !key.isEmpty else { return nil }
        func first(_ names: String...) -> String? { names.lazy.compactMap { environment[$0] }.first { !$0.isEmpty } }
        self.init(apiKey: key, organization: first("OPENAI_ORG_ID", "OPENAI_ORGANIZATION"), project: first("OPENAI_PROJECT_ID", "OPENAI_PROJECT"))
    }

    /// The key as a bearer token, bound to the first 16 hex digits of its SHA-256, with the
    /// organization and project.
    /// - Throws: ``CodexCore/AgentRuntimeError`` `invalid_configuration` when the key, organization or
    ///   project holds a character a header cannot carry (a control character, a line break, a non-ASCII
    ///   one; a space in the key), before anything is sent. The value is not shown.
    public func credentials() async throws -> AuthCredentials {
        // Caught here, where the setting is known, rather than as an unusable request header later.
        guard apiKey.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw AgentRuntimeError(.unusableSetting("the API key holds a character an API key never has (a control character, a space or a non-ASCII one)"))
        }
        for (name, value) in [("organization", organization), ("project", project)] {
            guard let value, !value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { continue }
            throw AgentRuntimeError(.unusableSetting("the OpenAI \(name) holds a control character or a non-ASCII one"))
        }
        var credentials = AuthCredentials(bearerToken: apiKey, binding: "api-key:" + String(SHA256.hexDigest(of: Array(apiKey.utf8)).prefix(16)))
        credentials.organization = organization
        credentials.project = project
        return credentials
    }

    /// The key's binding.
    public func currentBinding() async -> String? { try? await credentials().binding }

    /// `nil`: a rejected key cannot be renewed.
    public func recoverAfterUnauthorized(_ rejected: AuthCredentials) async throws -> AuthCredentials? { nil }
}
