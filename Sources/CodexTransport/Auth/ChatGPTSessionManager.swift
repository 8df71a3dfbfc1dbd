public import CodexCore
import CodexSchema
public import Foundation

/// Keeps the signed-in ChatGPT session in a ``FileSecureStore``: restores it on first use, refreshes it
/// (one request however many callers wait, before expiry and once after a 401) and saves every renewal,
/// and signs in, switches and signs out. A refresh or sign-in that finishes after a sign-out or a newer
/// session is dropped, so nothing revives a session the host has left.
///
/// ```swift
/// let manager = ChatGPTSessionManager(secureStore: try FileSecureStore(directory: secrets), httpClient: http)
/// let signIn = DeviceCodeSignIn(httpClient: http)
/// let state = try await manager.signIn {
///     let code = try await signIn.requestCode()
///     print("Open \(code.verificationURL) and enter \(code.userCode)")
///     return try await signIn.waitForApproval(code)
/// }
/// ```
public actor ChatGPTSessionManager: AgentSessionManaging {
    /// Where sessions are kept (`nil`: memory only).
    public nonisolated let sessionStore: ChatGPTSessionStore?
    private let issuer: AuthIssuer
    private let httpClient: any HTTPClient
    private let wallClock: any AgentWallClock
    private let refreshSkew: TimeInterval
    private let logSink: any AgentLogSink
    private var session: ChatGPTSession?
    private var restored = false
    /// Bumped by every sign-in, session switch and sign-out: work started under an older value is dropped.
    private var generation = 0
    private var refreshTask: (generation: Int, task: Task<ChatGPTSession, any Error>)?
    private var refreshCount = 0

    /// Creates a manager.
    ///
    /// - Parameters:
    ///   - secureStore: Where the session is kept, under ``ChatGPTSessionStore``'s key; `nil` keeps it in
    ///     memory only.
    ///   - issuer: Where tokens are refreshed.
    ///   - httpClient: The HTTP seam.
    ///   - wallClock: The date source for expiry.
    ///   - refreshSkew: Refresh this long before expiry. Default 120 s.
    ///   - logSink: Receives `auth.*` events (never tokens).
    public init(
        secureStore: FileSecureStore?, issuer: AuthIssuer = .openAI, httpClient: any HTTPClient,
        wallClock: any AgentWallClock = SystemWallClock(), refreshSkew: TimeInterval = 120, logSink: any AgentLogSink = NoOpAgentLogSink()
    ) {
        self.init(
            session: nil, sessionStore: secureStore.map { ChatGPTSessionStore(store: $0) }, issuer: issuer, httpClient: httpClient,
            wallClock: wallClock, refreshSkew: refreshSkew, logSink: logSink
        )
    }

    /// A manager that starts with `session` (the store is not read) or, when it is `nil`, restores
    /// from `sessionStore` on first use.
    init(
        session: ChatGPTSession?, sessionStore: ChatGPTSessionStore?, issuer: AuthIssuer, httpClient: any HTTPClient,
        wallClock: any AgentWallClock, refreshSkew: TimeInterval, logSink: any AgentLogSink
    ) {
        self.session = session
        restored = session != nil
        self.sessionStore = sessionStore
        self.issuer = issuer
        self.httpClient = httpClient
        self.wallClock = wallClock
        self.refreshSkew = refreshSkew
        self.logSink = logSink
    }

    /// How many refresh requests were sent.
    public var refreshes: Int { refreshCount }

    /// The session in use, or `nil` when signed out (reads the store once, never the network).
    public func currentSession() throws -> ChatGPTSession? { try restoredSession() }

    // MARK: - AuthProvider

    /// The credentials, refreshing first when the token is about to expire.
    ///
    /// - Throws: `not_signed_in` without a session; refresh and store errors.
    public func credentials() async throws -> AuthCredentials {
        let current = try requireSession()
        guard current.needsRefresh(now: wallClock.now(), skew: refreshSkew) else { return current.credentials }
        return try await refresh().credentials
    }

    /// The account ID (reads the store once, never the network).
    public func currentBinding() async -> String? {
        (try? restoredSession())?.accountID
    }

    /// After a 401: the current credentials if they already changed, else a refreshed session's.
    public func recoverAfterUnauthorized(_ rejected: AuthCredentials) async throws -> AuthCredentials? {
        let current = try requireSession()
        guard current.accessToken == rejected.bearerToken else { return current.credentials }
        return try await refresh().credentials
    }

    // MARK: - Session management

    /// Runs `obtain` and uses its session, unless the session was signed out or replaced meanwhile.
    public func signIn(_ obtain: @Sendable () async throws -> ChatGPTSession) async throws -> AgentAuthenticationState {
        let started = generation
        let obtained = try await obtain()
        guard generation == started else {
            throw AgentRuntimeError(.sessionReplaced("the session was signed out or replaced during sign-in; the new sign-in was not used"))
        }
        try adopt(obtained)
        logSink.record(AgentLogEvent(level: .info, category: .auth, name: "auth.session.signed_in"))
        return .signedIn(.init(obtained))
    }

    /// Saves `session` and uses it, replacing any other.
    public func useSession(_ session: ChatGPTSession) async throws {
        try adopt(session)
    }

    /// Forgets the session in memory and in the store.
    public func signOut() async throws {
        generation += 1
        refreshTask?.task.cancel()
        refreshTask = nil
        session = nil
        restored = true
        try sessionStore?.delete()
        logSink.record(AgentLogEvent(level: .info, category: .auth, name: "auth.session.signed_out"))
    }

    /// Who is signed in.
    public func authenticationState() async throws -> AgentAuthenticationState {
        try restoredSession().map { .signedIn(.init($0)) } ?? .signedOut
    }

    /// Refreshes now: one request however many callers wait; the result is saved, and dropped when the
    /// session was signed out or replaced meanwhile.
    ///
    /// - Throws: `not_signed_in`, `session_replaced`, the refresh's own errors, `secure_store_failure`.
    public func refresh() async throws -> ChatGPTSession {
        if let refreshTask, refreshTask.generation == generation { return try await awaitRefresh(refreshTask.task, generation: generation) }
        let current = try requireSession()
        let started = generation
        let task = Task { [issuer, httpClient, wallClock] in
            try await Self.refreshed(current, issuer: issuer, httpClient: httpClient, now: wallClock.now())
        }
        refreshTask = (started, task)
        refreshCount += 1
        return try await awaitRefresh(task, generation: started)
    }

    // MARK: - State

    /// Waits for `task`. The first waiter to resume while `task` still holds the refresh slot clears it
    /// and applies the result (in memory first, then saved: a rotated refresh token is never lost to a
    /// failed save); later waiters of the same task only return it. Nothing is applied when the session
    /// was signed out or replaced meanwhile.
    private func awaitRefresh(_ task: Task<ChatGPTSession, any Error>, generation started: Int) async throws -> ChatGPTSession {
        let result = await task.result
        let applies = refreshTask?.task == task
        if applies { refreshTask = nil }
        guard generation == started else { throw Self.replacedDuringRefresh(session) }
        switch result {
        case .failure(let error):
            if applies {
                logSink.record(AgentLogEvent(level: .warning, category: .auth, name: "auth.session.refresh_failed",
                                             metadata: ["error_code": (error as? AgentRuntimeError)?.code.rawValue ?? "unknown"]))
            }
            throw error
        case .success(let renewed):
            guard applies else { return renewed }
            session = renewed
            try sessionStore?.save(renewed)
            logSink.record(AgentLogEvent(level: .info, category: .auth, name: "auth.session.refreshed", metadata: ["account_id_known": "true"]))
            return renewed
        }
    }

    private static func replacedDuringRefresh(_ current: ChatGPTSession?) -> AgentRuntimeError {
        current == nil
            ? AgentRuntimeError(.notSignedIn("signed out while the session was being refreshed"))
            : AgentRuntimeError(.sessionReplaced("the session was replaced while it was being refreshed"))
    }

    private func adopt(_ new: ChatGPTSession) throws {
        try sessionStore?.save(new)
        generation += 1
        refreshTask?.task.cancel()
        refreshTask = nil
        session = new
        restored = true
    }

    private func restoredSession() throws -> ChatGPTSession? {
        if !restored {
            session = try sessionStore?.load()
            restored = true
        }
        return session
    }

    private func requireSession() throws -> ChatGPTSession {
        guard let current = try restoredSession() else {
            throw AgentRuntimeError(.notSignedIn("no ChatGPT session is signed in"))
        }
        return current
    }

    // MARK: - Refresh request

    static func refreshed(_ session: ChatGPTSession, issuer: AuthIssuer, httpClient: any HTTPClient, now: Date) async throws -> ChatGPTSession {
        do {
            return try await refreshedUnredacted(session, issuer: issuer, httpClient: httpClient, now: now)
        } catch let error as AgentRuntimeError {
            // The issuer may echo a token back in its error: none leaves here.
            throw error.redacting(session.credentials.secrets)
        }
    }

    /// Where `session` is renewed: the issuer it records when that is another than `configured` (a refresh
    /// token goes back only to the issuer that gave it), else `configured`.
    static func renewingIssuer(of session: ChatGPTSession, configured: AuthIssuer) throws -> AuthIssuer {
        guard let recorded = session.issuer, recorded != configured.baseURL else { return configured }
        return try AuthIssuer(baseURL: recorded)
    }

    private static func refreshedUnredacted(_ session: ChatGPTSession, issuer configured: AuthIssuer, httpClient: any HTTPClient, now: Date) async throws -> ChatGPTSession {
        let issuer = try renewingIssuer(of: session, configured: configured)
        let (status, body) = try await issuer.post(
            "oauth/token",
            json: ["client_id": .string(issuer.clientID), "grant_type": "refresh_token", "refresh_token": .string(session.refreshToken)],
            using: httpClient
        )
        guard (200..<300).contains(status) else {
            let code = body?["error"]?["code"]?.stringValue ?? body?["error"]?.stringValue ?? body?["code"]?.stringValue
            if status == 401 {
                throw AgentRuntimeError(.refreshRefused(status: status, providerCode: code))
            }
            throw AgentRuntimeError(.issuer("refreshing the session failed with HTTP \(status)", status: status, providerCode: code, retryable: true))
        }
        var renewed = try ChatGPTSession(
            idToken: body?["id_token"]?.stringValue ?? session.idToken,
            accessToken: body?["access_token"]?.stringValue ?? session.accessToken,
            refreshToken: body?["refresh_token"]?.stringValue ?? session.refreshToken,
            accountID: session.accountID,
            lastRefresh: now
        )
        renewed.issuer = session.issuer
        guard renewed.accountID == session.accountID else {
            throw AgentRuntimeError(.accountMismatch("the refreshed session belongs to a different account; it was not used"))
        }
        return renewed
    }
}
