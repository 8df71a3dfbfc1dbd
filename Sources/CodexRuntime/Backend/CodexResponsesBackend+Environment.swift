import CodexCore
public import CodexTransport

extension CodexResponsesBackend {
    /// A backend that reaches the service the way the environment says: the credential and endpoint of
    /// ``CodexTransport/ResponsesEnvironment/resolve(_:codexHome:savedCredentials:order:httpClient:readOnly:)``
    /// (`OPENAI_API_KEY` with `OPENAI_BASE_URL`, `OPENAI_ORG_ID` and `OPENAI_PROJECT_ID`, else the Codex
    /// CLI's `auth.json`), with `configuration`'s other options.
    ///
    /// ```swift
    /// let backend = try CodexResponsesBackend.fromEnvironment()
    /// let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore()))
    /// ```
    ///
    /// - Parameters:
    ///   - configuration: Every option but the endpoint, which the environment decides.
    ///   - environment: The variables to read (default: the process's).
    ///   - httpClient: The HTTP seam.
    /// - Throws: ``CodexCore/AgentRuntimeError`` `not_signed_in` when no credential is found,
    ///   `invalid_endpoint` for a bad `OPENAI_BASE_URL`, `secure_store_failure` for a malformed `auth.json`.
    public static func fromEnvironment(
        configuration: CodexResponsesBackendConfiguration = .init(),
        environment: [String: String]? = nil,
        httpClient: any HTTPClient = DefaultHTTPClient()
    ) throws -> CodexResponsesBackend {
        let service = try environment.map { try ResponsesEnvironment.resolve($0, httpClient: httpClient) }
            ?? ResponsesEnvironment.resolve(httpClient: httpClient)
        return CodexResponsesBackend(environment: service, configuration: configuration, httpClient: httpClient)
    }

    /// A backend for an already resolved environment: its endpoint and credential, `configuration`'s
    /// other options.
    public convenience init(
        environment: ResponsesEnvironment, configuration: CodexResponsesBackendConfiguration = .init(), httpClient: any HTTPClient = DefaultHTTPClient()
    ) {
        var configuration = configuration
        configuration.endpoint = environment.endpoint
        self.init(configuration: configuration, httpClient: httpClient, authProvider: environment.authProvider)
    }
}
