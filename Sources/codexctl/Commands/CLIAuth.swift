import CodexCore
import CodexTransport
import Foundation

/// Where `codexctl` finds credentials, in one order for every command: `OPENAI_API_KEY`, then the Codex
/// CLI's `auth.json`, then the API key CodexKit saved, then the ChatGPT session CodexKit saved.
enum CLIAuth {
    enum Source {
        case savedSession(ChatGPTSession)
        /// An API key saved by `codexctl auth login --with-api-key`.
        case savedAPIKey(String)
        case codexCLI(CodexCLIAuthFile.Contents)
        case apiKey
    }

    /// The secret store entry of a saved API key.
    static let apiKeyEntry = ResponsesEnvironment.savedAPIKeyEntry

    /// The API key saved in `store`, if any (read-only).
    static func savedAPIKey(in store: URL) throws -> String? {
        guard FileManager.default.fileExists(atPath: store.path), let bytes = try FileSecureStore(readingAt: store).load(apiKeyEntry) else { return nil }
        let key = String(decoding: bytes, as: UTF8.self)
        return key.isEmpty ? nil : key
    }

    /// `--secrets <dir>`: where CodexKit keeps the key and session it saved.
    static let secretsOption = CLIOption.value("--secrets", "dir", "CodexKit's secret store (default $CODEXKIT_HOME/secrets or ~/.codexkit/secrets).")
    /// `--codex-home <dir>`: the Codex CLI's home.
    static let codexHomeOption = CLIOption.value("--codex-home", "dir", "The Codex CLI home holding auth.json (default $CODEX_HOME or ~/.codex).")

    /// `--secrets DIR`, else `$CODEXKIT_HOME/secrets`, else `~/.codexkit/secrets`.
    static func storeDirectory(_ option: String?) -> URL {
        if let option { return URL(fileURLWithPath: option) }
        let environment = ProcessInfo.processInfo.environment
        // A relative CODEXKIT_HOME is ignored, as a relative XDG_STATE_HOME is: secrets must not follow
        // the directory a command runs in.
        if let home = environment["CODEXKIT_HOME"], home.hasPrefix("/") { return URL(fileURLWithPath: home).appendingPathComponent("secrets") }
        return URL(fileURLWithPath: UserHome.path(environment)).appendingPathComponent(".codexkit/secrets")
    }

    static func codexFile(_ option: String?) -> CodexCLIAuthFile {
        if let option { return CodexCLIAuthFile(url: URL(fileURLWithPath: option).appendingPathComponent("auth.json")) }
        return CodexCLIAuthFile()
    }

    /// The first available source, or `nil` when not signed in. Only reads (the secret store is opened
    /// read-only).
    static func source(store: URL, codexHome: String?) throws -> Source? {
        if APIKeyAuthProvider() != nil { return .apiKey }
        // An auth.json without a credential is passed over (as the runtime's resolution does).
        let reading = try codexFile(codexHome).readCredential()
        if let contents = reading.contents { return .codexCLI(contents) }
        if let key = try savedAPIKey(in: store) { return .savedAPIKey(key) }
        if FileManager.default.fileExists(atPath: store.path),
           let session = try ChatGPTSessionStore(store: try FileSecureStore(readingAt: store)).load() {
            return .savedSession(session)
        }
        if let empty = reading.empty { throw empty }
        return nil
    }

    /// The credential and endpoint of the first source found (in ``ResponsesEnvironment``'s order, or
    /// only `only`), the one resolution every command uses. With `readOnly`, a renewed session would not
    /// be saved (for commands that only look).
    static func environment(
        store: URL, codexHome: String?, only: ResponsesEnvironment.Source? = nil, http: any HTTPClient = DefaultHTTPClient(), readOnly: Bool = false
    ) throws -> ResponsesEnvironment? {
        try ResponsesEnvironment.resolveIfPresent(
            codexHome: codexHome.map { URL(fileURLWithPath: $0) }, savedCredentials: store,
            order: only.map { [$0] } ?? ResponsesEnvironment.Source.allCases, httpClient: http, readOnly: readOnly
        )
    }

    /// A provider for the first available source (its endpoint is not looked at, so a bad
    /// `OPENAI_BASE_URL` does not stop commands that need the credential only).
    static func provider(store: URL, codexHome: String?, http: any HTTPClient, readOnly: Bool = false) throws -> (any AuthProvider)? {
        try ResponsesEnvironment.credentialIfPresent(
            codexHome: codexHome.map { URL(fileURLWithPath: $0) }, savedCredentials: store, httpClient: http, readOnly: readOnly
        )?.authProvider
    }
}
