public import CodexCore

/// Authenticates requests: the bearer token, `ChatGPT-Account-ID` and `X-OpenAI-Fedramp` headers from
/// an ``AuthProvider`` (or from fixed credentials), and, with a provider, one renewal after an HTTP 401:
/// the provider is asked once for new credentials, and the request is sent again only when they have
/// the same binding. A 403 is never renewed.
public struct AuthenticationMiddleware: HTTPMiddleware {
    private enum Source: Sendable {
        case provider(any AuthProvider, renewsUnauthorized: Bool)
        case fixed(AuthCredentials)
    }

    private let source: Source
    private let logSink: any AgentLogSink

    /// Credentials from `provider`, renewed once after a 401 when `renewsUnauthorized` (the default).
    ///
    /// - Parameters:
    ///   - provider: Supplies and renews credentials.
    ///   - renewsUnauthorized: Whether a 401 asks the provider for renewed credentials.
    ///   - logSink: Told `auth.unauthorized.recovered` after a renewal.
    public init(provider: any AuthProvider, renewsUnauthorized: Bool = true, logSink: any AgentLogSink = NoOpAgentLogSink()) {
        source = .provider(provider, renewsUnauthorized: renewsUnauthorized)
        self.logSink = logSink
    }

    /// Always `credentials`, never renewed: for a caller that decides itself what a 401 means
    /// (structured recovery spends an attempt and asks the host's authorization first).
    public init(credentials: AuthCredentials) {
        source = .fixed(credentials)
        logSink = NoOpAgentLogSink()
    }

    /// Adds the headers, sends, and renews once after a 401.
    public func intercept(_ request: HTTPRequest, context: HTTPMiddlewareContext, next: HTTPMiddlewareNext) async throws -> HTTPResponse {
        switch source {
        case .fixed(let credentials):
            return try await send(request, with: credentials, context: context, next: next)
        case .provider(let provider, let renewsUnauthorized):
            let credentials = try await provider.credentials()
            let response = try await send(request, with: credentials, context: context, next: next)
            guard response.statusCode == 401, renewsUnauthorized else { return response }
            let renewed: AuthCredentials?
            do {
                renewed = try await provider.recoverAfterUnauthorized(credentials)
            } catch {
                response.body.cancel()
                throw error
            }
            guard let renewed, renewed.binding == credentials.binding else { return response }
            response.body.cancel()
            logSink.record(AgentLogEvent(level: .info, category: .auth, name: "auth.unauthorized.recovered"))
            return try await send(request, with: renewed, context: context, next: next)
        }
    }

    private func send(_ request: HTTPRequest, with credentials: AuthCredentials, context: HTTPMiddlewareContext, next: HTTPMiddlewareNext) async throws -> HTTPResponse {
        context.noteCredentials(credentials)
        var request = request
        Self.authorize(&request.headers, with: credentials)
        return try await next(request)
    }

    /// Sets the authentication headers for `credentials`.
    static func authorize(_ headers: inout HTTPHeaders, with credentials: AuthCredentials) {
        headers["Authorization"] = "Bearer \(credentials.bearerToken)"
        if let accountID = credentials.accountID { headers["ChatGPT-Account-ID"] = accountID }
        if credentials.isFedRAMP { headers["X-OpenAI-Fedramp"] = "true" }
        if let organization = credentials.organization { headers["OpenAI-Organization"] = organization }
        if let project = credentials.project { headers["OpenAI-Project"] = project }
    }
}
