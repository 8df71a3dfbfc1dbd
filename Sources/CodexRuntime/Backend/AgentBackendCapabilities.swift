public import CodexCore
public import CodexSchema
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
    /// the provider offered.
    /// - Throws: ``CodexCore/AgentRuntimeError`` `invalid_configuration` when the backend already took
    ///   another runtime's provider (one backend cannot serve two accounts' runtimes).
    func adoptAuthProvider(_ provider: any AuthProvider) throws
}

/// A backend that can compact a thread's context on the provider's side (``CodexResponsesBackend``
/// does: `POST {base}/responses/compact`). The runtime uses it for the remote compaction strategies.
public protocol AgentBackendContextCompacting: AgentBackend {
    /// The provider's replacement for `request.history` (items replayed as they are in later requests).
    /// - Throws: The request's typed error; nothing is stored by the backend.
    func compactContext(_ request: AgentBackendCompactionRequest) async throws -> [JSONValue]
}

/// What a backend compacts: the history a thread's next request would replay, and who sends it.
public struct AgentBackendCompactionRequest: Sendable {
    /// The thread.
    public var threadID: AgentThreadID
    /// The model the thread's turns use.
    public var model: CodexModel
    /// The instructions the thread's turns send.
    public var instructions: String
    /// The history to compact (from the latest earlier compaction record on).
    public var history: [AgentHistoryItem]

    /// Creates a request.
    public init(threadID: AgentThreadID, model: CodexModel, instructions: String, history: [AgentHistoryItem]) {
        self.threadID = threadID
        self.model = model
        self.instructions = instructions
        self.history = history
    }
}

/// An auth provider filled in later: the runtime's, adopted by a backend created without one. Until
/// then every request fails with `not_signed_in`.
final class AdoptedAuthProvider: AuthProvider {
    private let slot = Mutex<(any AuthProvider)?>(nil)

    /// Takes `provider`; offering the same provider object again is harmless.
    /// - Throws: `invalid_configuration` when another provider was adopted already.
    func adopt(_ provider: any AuthProvider) throws {
        let conflict = slot.withLock { slot -> Bool in
            guard let adopted = slot else {
                slot = provider
                return false
            }
            return !Self.isSame(adopted, provider)
        }
        if conflict {
            throw AgentRuntimeError(
                code: .invalidConfiguration,
                message: "the backend already uses another runtime's auth provider; give each runtime its own backend"
            )
        }
    }

    /// Whether two providers are the same object (value-type providers are never the same).
    private static func isSame(_ lhs: any AuthProvider, _ rhs: any AuthProvider) -> Bool {
        guard type(of: lhs) is AnyClass, type(of: rhs) is AnyClass else { return false }
        return ObjectIdentifier(lhs as AnyObject) == ObjectIdentifier(rhs as AnyObject)
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
