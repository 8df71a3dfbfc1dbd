public import CodexCore
public import Foundation

/// Keeps one ChatGPT session fresh: refreshes at `{issuer}/oauth/token` when the access token expires
/// within the skew (120 s) or after a 401, shares one refresh among concurrent callers, refuses a
/// refreshed session for a different account, and saves refreshed sessions to an optional store.
///
/// A ``ChatGPTSessionManager`` that starts with `session` and offers no sign-in or sign-out; use the
/// manager itself to let a host sign in, switch sessions and sign out.
public final class ChatGPTSessionAuthProvider: AuthProvider {
    private let manager: ChatGPTSessionManager
    private let initial: ChatGPTSession

    /// Creates a provider.
    ///
    /// - Parameters:
    ///   - session: The signed-in session.
    ///   - issuer: Where tokens are refreshed.
    ///   - httpClient: The HTTP seam.
    ///   - store: Where refreshed sessions are saved, if anywhere.
    ///   - wallClock: The date source for expiry.
    ///   - refreshSkew: Refresh this long before expiry. Default 120 s.
    ///   - logSink: Receives `auth.*` events (never tokens).
    public init(
        session: ChatGPTSession, issuer: AuthIssuer = .openAI, httpClient: any HTTPClient, store: ChatGPTSessionStore? = nil,
        wallClock: any AgentWallClock = SystemWallClock(), refreshSkew: TimeInterval = 120, logSink: any AgentLogSink = NoOpAgentLogSink()
    ) {
        initial = session
        manager = ChatGPTSessionManager(
            session: session, sessionStore: store, issuer: issuer, httpClient: httpClient, wallClock: wallClock, refreshSkew: refreshSkew, logSink: logSink
        )
    }

    /// The current session.
    public var currentSession: ChatGPTSession {
        get async { (try? await manager.currentSession()) ?? initial }
    }

    /// How many refresh requests were sent.
    public var refreshes: Int {
        get async { await manager.refreshes }
    }

    /// The credentials, refreshing first when the token is about to expire.
    public func credentials() async throws -> AuthCredentials { try await manager.credentials() }

    /// The account ID (no I/O).
    public func currentBinding() async -> String? { await manager.currentBinding() }

    /// After a 401: the current credentials if they already changed, else a refreshed session's.
    public func recoverAfterUnauthorized(_ rejected: AuthCredentials) async throws -> AuthCredentials? {
        try await manager.recoverAfterUnauthorized(rejected)
    }

    /// Refreshes now (one request however many callers wait).
    public func refresh() async throws -> ChatGPTSession { try await manager.refresh() }
}
