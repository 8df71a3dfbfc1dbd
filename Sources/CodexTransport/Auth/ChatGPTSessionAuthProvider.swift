public import CodexCore
import CodexSchema
public import Foundation

/// Keeps a ChatGPT session fresh: refreshes at `{issuer}/oauth/token` when the access token expires
/// within the skew (120 s) or after a 401, shares one refresh among concurrent callers, refuses a
/// refreshed session for a different account, and saves refreshed sessions to an optional store.
public actor ChatGPTSessionAuthProvider: AuthProvider {
    private var session: ChatGPTSession
    private var refreshTask: Task<ChatGPTSession, any Error>?
    private let issuer: AuthIssuer
    private let httpClient: any HTTPClient
    private let store: ChatGPTSessionStore?
    private let wallClock: any AgentWallClock
    private let refreshSkew: TimeInterval
    private let logSink: any AgentLogSink
    private var refreshCount = 0

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
        self.session = session
        self.issuer = issuer
        self.httpClient = httpClient
        self.store = store
        self.wallClock = wallClock
        self.refreshSkew = refreshSkew
        self.logSink = logSink
    }

    /// The current session.
    public var currentSession: ChatGPTSession { session }

    /// How many refresh requests were sent.
    public var refreshes: Int { refreshCount }

    /// The credentials, refreshing first when the token is about to expire.
    public func credentials() async throws -> AuthCredentials {
        if session.needsRefresh(now: wallClock.now(), skew: refreshSkew) {
            session = try await refresh()
        }
        return session.credentials
    }

    /// The account ID (no I/O).
    public func currentBinding() async -> String? { session.accountID }

    /// After a 401: the current credentials if they already changed, else a refreshed session's.
    public func recoverAfterUnauthorized(_ rejected: AuthCredentials) async throws -> AuthCredentials? {
        if session.accessToken != rejected.bearerToken { return session.credentials }
        session = try await refresh()
        return session.credentials
    }

    /// Refreshes now (one request however many callers wait).
    public func refresh() async throws -> ChatGPTSession {
        if let refreshTask { return try await refreshTask.value }
        let current = session
        let task = Task { [issuer, httpClient, wallClock] in
            try await Self.refreshed(current, issuer: issuer, httpClient: httpClient, now: wallClock.now())
        }
        refreshTask = task
        refreshCount += 1
        defer { refreshTask = nil }
        do {
            let renewed = try await task.value
            session = renewed
            try store?.save(renewed)
            logSink.record(AgentLogEvent(level: .info, category: .auth, name: "auth.session.refreshed", metadata: ["account_id_known": "true"]))
            return renewed
        } catch {
            logSink.record(AgentLogEvent(level: .warning, category: .auth, name: "auth.session.refresh_failed",
                                         metadata: ["error_code": (error as? AgentRuntimeError)?.code.rawValue ?? "unknown"]))
            throw error
        }
    }

    static func refreshed(_ session: ChatGPTSession, issuer: AuthIssuer, httpClient: any HTTPClient, now: Date) async throws -> ChatGPTSession {
        do {
            return try await refreshedUnredacted(session, issuer: issuer, httpClient: httpClient, now: now)
        } catch let error as AgentRuntimeError {
            // The issuer may echo a token back in its error: none leaves here.
            throw error.redacting(session.credentials.secrets)
        }
    }

    private static func refreshedUnredacted(_ session: ChatGPTSession, issuer: AuthIssuer, httpClient: any HTTPClient, now: Date) async throws -> ChatGPTSession {
        let (status, body) = try await issuer.post(
            "oauth/token",
            json: ["client_id": .string(issuer.clientID), "grant_type": "refresh_token", "refresh_token": .string(session.refreshToken)],
            using: httpClient
        )
        guard (200..<300).contains(status) else {
            let code = body?["error"]?["code"]?.stringValue ?? body?["error"]?.stringValue ?? body?["code"]?.stringValue
            if status == 401 {
                throw AgentRuntimeError(
                    code: .refreshFailed, message: "the session can no longer be refreshed (\(code ?? "unauthorized")); sign in again",
                    http: .init(statusCode: status, providerCode: code)
                )
            }
            throw AgentRuntimeError(
                code: .providerError, message: "refreshing the session failed with HTTP \(status)",
                http: .init(statusCode: status, providerCode: code),
                retry: .init(attempt: 1, maximumAttempts: 1, isRetryable: true, safety: .beforeOutput)
            )
        }
        let renewed = try ChatGPTSession(
            idToken: body?["id_token"]?.stringValue ?? session.idToken,
            accessToken: body?["access_token"]?.stringValue ?? session.accessToken,
            refreshToken: body?["refresh_token"]?.stringValue ?? session.refreshToken,
            accountID: session.accountID,
            lastRefresh: now
        )
        guard renewed.accountID == session.accountID else {
            throw AgentRuntimeError(code: .accountMismatch, message: "the refreshed session belongs to a different account; it was not used")
        }
        return renewed
    }
}

/// Saves a ``ChatGPTSession`` as JSON in a ``FileSecureStore``.
public struct ChatGPTSessionStore: Sendable {
    /// The store.
    public let store: FileSecureStore
    /// The key.
    public let key: String

    /// Creates a session store.
    public init(store: FileSecureStore, key: String = "chatgpt-session.json") {
        self.store = store
        self.key = key
    }

    /// Saves the session.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `secure_store_failure`.
    public func save(_ session: ChatGPTSession) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        try store.save([UInt8](try encoder.encode(session)), for: key)
    }

    /// The saved session, or `nil`.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `secure_store_failure` when the file is unsafe or unreadable.
    public func load() throws -> ChatGPTSession? {
        guard let bytes = try store.load(key) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        do {
            return try decoder.decode(ChatGPTSession.self, from: Data(bytes))
        } catch {
            throw AgentRuntimeError(code: .secureStoreFailure, message: "the saved session is not readable")
        }
    }

    /// Removes the saved session.
    public func delete() throws {
        try store.delete(key)
    }
}
