public import Foundation

/// Who is signed in, as a session manager sees it. Log-safe: no tokens.
public enum AgentAuthenticationState: Sendable, Hashable {
    /// No session: requests fail with `not_signed_in` until one is used.
    case signedOut
    /// A ChatGPT session is in use.
    case signedIn(Account)

    /// What is known about the signed-in account.
    public struct Account: Sendable, Hashable {
        /// The ChatGPT account (workspace) ID: the credentials' binding.
        public var accountID: String
        /// The account email, when the ID token says.
        public var email: String?
        /// The plan, e.g. `plus`, when the ID token says.
        public var planType: String?
        /// When the access token expires, when it says (it is refreshed before then).
        public var expiresAt: Date?

        /// Creates an account description.
        public init(accountID: String, email: String?, planType: String?, expiresAt: Date?) {
            self.accountID = accountID
            self.email = email
            self.planType = planType
            self.expiresAt = expiresAt
        }

        /// The account of `session`.
        public init(_ session: ChatGPTSession) {
            self.init(accountID: session.accountID, email: session.email, planType: session.planType, expiresAt: session.expiresAt)
        }
    }
}

/// An auth provider that also keeps the signed-in session: sign-in, switching sessions and sign-out.
///
/// Implementation requirements: a session used or a sign-out is durable before the call returns; a
/// refresh or sign-in that finishes after a sign-out or a newer session never revives the old one.
public protocol AgentSessionManaging: AuthProvider {
    /// Runs `obtain` (a device-code or browser sign-in) and uses the session it returns.
    ///
    /// - Throws: `obtain`'s error, `session_replaced` when the session was signed out or replaced while
    ///   `obtain` ran (its result is dropped), or `secure_store_failure`.
    func signIn(_ obtain: @Sendable () async throws -> ChatGPTSession) async throws -> AgentAuthenticationState
    /// Saves `session` and uses it from now on, replacing any other.
    func useSession(_ session: ChatGPTSession) async throws
    /// Forgets the session, in memory and in the store; requests then fail with `not_signed_in`.
    func signOut() async throws
    /// Who is signed in (reads the store once, never the network).
    func authenticationState() async throws -> AgentAuthenticationState
}
