public import CodexCore
public import CodexTransport
import Synchronization

/// A backend that can list the models the signed-in account may use (``CodexResponsesBackend`` does:
/// the Codex `/models` catalog). The runtime's ``AgentRuntime/listModels(policy:)`` asks it; for other
/// backends the runtime returns the bundled catalog.
public protocol AgentBackendModelDiscovering: AgentBackend {
    /// The model catalog under `policy`.
    /// - Throws: Authentication failures always; other failures only under `.refresh`.
    func listModels(policy: CodexModelRefreshPolicy) async throws -> CodexModelCatalogSnapshot
}

/// A backend that remembers the account limits its responses reported (``CodexResponsesBackend`` does:
/// rate-limit headers, error responses included, and `codex.rate_limits` events).
public protocol AgentBackendRateLimitReporting: AgentBackend {
    /// The latest snapshot per limit family for the account signed in now; never a new request. Empty
    /// when that account reported none (another account's limits are never returned).
    func rateLimits() async -> [AgentRateLimitSnapshot]
}

/// A backend that can use the runtime's credentials: a backend created without an auth provider of its
/// own takes the runtime's ``AgentRuntime/Configuration/authProvider`` when the runtime is created.
public protocol AgentBackendAuthenticating: AgentBackend {
    /// Offers the runtime's auth provider. A backend with its own provider keeps it; one without takes
    /// the first provider offered.
    func adoptAuthProvider(_ provider: any AuthProvider)
}

/// An auth provider filled in later: the runtime's, adopted by a backend created without one. Until
/// then every request fails with `not_signed_in`.
final class AdoptedAuthProvider: AuthProvider {
    private let slot = Mutex<(any AuthProvider)?>(nil)

    /// Takes `provider` unless one was adopted already.
    func adopt(_ provider: any AuthProvider) {
        slot.withLock { slot in
            if slot == nil { slot = provider }
        }
    }

    private func provider() throws -> any AuthProvider {
        guard let provider = slot.withLock({ $0 }) else {
            throw AgentRuntimeError(
                code: .notSignedIn, message: "no credentials: give the runtime (or the backend) an auth provider"
            )
        }
        return provider
    }

    func credentials() async throws -> AuthCredentials {
        try await provider().credentials()
    }

    func recoverAfterUnauthorized(_ rejected: AuthCredentials) async throws -> AuthCredentials? {
        try await provider().recoverAfterUnauthorized(rejected)
    }

    func currentBinding() async -> String? {
        await (try? provider())?.currentBinding()
    }
}
