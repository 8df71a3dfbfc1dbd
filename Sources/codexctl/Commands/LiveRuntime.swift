import CodexCore
import CodexRuntime
import CodexStorageSQLite
import CodexTransport
import Foundation

/// The runtime `send` and `chat` talk to the service with: the first credential found, the endpoint its
/// profile needs, the built-in backend and the state store.
struct LiveRuntime {
    let auth: SendOptions.AuthSource?
    let codexHome: String?
    let store: URL
    let endpoint: URL?
    let model: CodexModel?
    let reasoningSummaries: Bool
    /// The SQLite database, or `nil` to keep nothing.
    let database: String?

    /// The runtime.
    /// - Throws: `not_signed_in` without credentials, or what opening the database throws.
    func make() throws -> AgentRuntime {
        guard let credential = try credential() else {
            throw AgentRuntimeError(code: .notSignedIn, message: "no credentials found")
        }
        return try makeRuntime(credential)
    }

    /// The first credential found, in the order `send` documents, with the endpoint profile it needs
    /// (an API key never goes to the ChatGPT backend).
    private func credential() throws -> (provider: any AuthProvider, profile: ResponsesEndpoint.Profile, baseURL: URL?)? {
        let order: [SendOptions.AuthSource] = auth.map { [$0] } ?? [.apikey, .codex, .session]
        let environment = ProcessInfo.processInfo.environment
        for source in order {
            switch source {
            case .apikey:
                guard let provider = APIKeyAuthProvider() else { continue }
                let base = environment["OPENAI_BASE_URL"].flatMap { $0.isEmpty ? nil : URL(string: $0) }
                return (provider, .publicAPI, base)
            case .codex:
                let file = CLIAuth.codexFile(codexHome)
                guard let contents = try file.read() else { continue }
                if case .apiKey = contents { return (CodexCLIAuthProvider(file: file), .publicAPI, nil) }
                return (CodexCLIAuthProvider(file: file), .chatGPT, nil)
            case .session:
                if let key = try CLIAuth.savedAPIKey(in: store) {
                    return (CLIAuth.scoped(key), .publicAPI, environment["OPENAI_BASE_URL"].flatMap { $0.isEmpty ? nil : URL(string: $0) })
                }
                guard FileManager.default.fileExists(atPath: store.path),
                      let session = try ChatGPTSessionStore(store: try FileSecureStore(readingAt: store)).load() else { continue }
                let provider = ChatGPTSessionAuthProvider(
                    session: session, issuer: .openAI, httpClient: DefaultHTTPClient(),
                    store: ChatGPTSessionStore(store: try FileSecureStore(directory: store))
                )
                return (provider, .chatGPT, nil)
            }
        }
        return nil
    }

    private func makeRuntime(_ credential: (provider: any AuthProvider, profile: ResponsesEndpoint.Profile, baseURL: URL?)) throws -> AgentRuntime {
        var configuration = CodexResponsesBackendConfiguration(enableReasoningSummaries: reasoningSummaries)
        if let base = endpoint ?? credential.baseURL {
            configuration.endpoint = try ResponsesEndpoint(baseURL: base, profile: credential.profile)
        } else {
            configuration.endpoint = credential.profile == .chatGPT ? .chatGPT : .publicAPI
        }
        if let model = model { configuration.model = model }
        let backend = CodexResponsesBackend(configuration: configuration, authProvider: credential.provider)
        return try AgentRuntime(configuration: .init(backend: backend, stateStore: try stateStore()))
    }

    /// In memory without a database; else the SQLite database, its directory created private (0700).
    private func stateStore() throws -> any RuntimeStateStore {
        guard let database else { return InMemoryRuntimeStateStore() }
        let directory = URL(fileURLWithPath: database).deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: directory.path) {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        return try SQLiteRuntimeStateStore(path: database)
    }

}
