import CodexCore
public import Foundation

/// How to reach the model service, read from the environment the way the Codex CLI and OpenAI's SDKs
/// read it: the one place a host (and `codexctl`) turns variables and sign-in files into a credential
/// and an endpoint.
///
/// ```swift
/// let service = try ResponsesEnvironment.resolve()     // OPENAI_API_KEY, OPENAI_BASE_URL, ~/.codex/auth.json …
/// let client = ResponsesClient(
///     configuration: .init(endpoint: service.endpoint), httpClient: DefaultHTTPClient(), authProvider: service.authProvider
/// )
/// ```
///
/// Sources, in this order unless `order` says otherwise; the first one present wins:
/// 1. ``Source/apiKeyVariable``: `OPENAI_API_KEY`, with `OPENAI_ORG_ID` (else `OPENAI_ORGANIZATION`) and
///    `OPENAI_PROJECT_ID` (else `OPENAI_PROJECT`); the public API.
/// 2. ``Source/codexCLI``: the Codex CLI's `auth.json` (`$CODEX_HOME/auth.json`, else
///    `~/.codex/auth.json`), read and never written: an API key there goes to the public API, a ChatGPT
///    session to the ChatGPT/Codex backend.
/// 3. ``Source/savedCredentials``: what CodexKit saved in a ``FileSecureStore`` directory (an API key,
///    else a ChatGPT session), when `savedCredentials` names one.
///
/// The endpoint: the public API's base is `OPENAI_BASE_URL` when it is set (https, or http to a
/// loopback address), else `https://api.openai.com/v1`; the ChatGPT backend is
/// `https://chatgpt.com/backend-api/codex` (`OPENAI_BASE_URL` does not apply to it, as in the Codex CLI).
public struct ResponsesEnvironment: Sendable {
    /// Where a credential can come from.
    public enum Source: String, Sendable, CaseIterable {
        /// `OPENAI_API_KEY` (with its organization and project variables).
        case apiKeyVariable = "apikey"
        /// The Codex CLI's `auth.json`.
        case codexCLI = "codex"
        /// The API key or ChatGPT session CodexKit saved in a secure store directory.
        case savedCredentials = "session"
    }

    /// What authenticates requests.
    public let authProvider: any AuthProvider
    /// Where requests go.
    public let endpoint: ResponsesEndpoint
    /// Which source the credential came from.
    public let source: Source

    /// Creates a resolved environment (for hosts that assemble one themselves).
    public init(authProvider: any AuthProvider, endpoint: ResponsesEndpoint, source: Source) {
        self.authProvider = authProvider
        self.endpoint = endpoint
        self.source = source
    }

    /// The credential of the first source present, and the endpoint profile it needs, without looking at
    /// `OPENAI_BASE_URL` (for programs that need the credential only, such as its account binding).
    /// - Parameters: as ``resolveIfPresent(_:codexHome:savedCredentials:order:httpClient:readOnly:)``.
    /// - Returns: The credential, where it came from and its profile, or `nil` when no source is present.
    /// - Throws: ``CodexCore/AgentRuntimeError`` `secure_store_failure` for an unreadable or malformed
    ///   sign-in file or store.
    public static func credentialIfPresent(
        _ environment: [String: String] = ProcessInfo.processInfo.environment,
        codexHome: URL? = nil,
        savedCredentials: URL? = nil,
        order: [Source] = Source.allCases,
        httpClient: any HTTPClient = DefaultHTTPClient(),
        readOnly: Bool = false
    ) throws -> (authProvider: any AuthProvider, source: Source, profile: ResponsesEndpoint.Profile)? {
        // An auth.json that holds no credential is not a source found: the next source is tried, and its
        // reason is the answer only when none is found.
        var empty: AgentRuntimeError?
        for source in order {
            switch source {
            case .apiKeyVariable:
                guard let provider = APIKeyAuthProvider(environment: environment) else { continue }
                return (provider, source, .publicAPI)
            case .codexCLI:
                let file = codexHome.map { CodexCLIAuthFile(url: $0.appendingPathComponent("auth.json")) } ?? CodexCLIAuthFile(environment: environment)
                let reading = try file.readCredential()
                guard let contents = reading.contents else {
                    empty = reading.empty ?? empty
                    continue
                }
                let profile: ResponsesEndpoint.Profile = if case .apiKey = contents { .publicAPI } else { .chatGPT }
                return (CodexCLIAuthProvider(file: file), source, profile)
            case .savedCredentials:
                guard let directory = savedCredentials, FileManager.default.fileExists(atPath: directory.path) else { continue }
                let store = try FileSecureStore(readingAt: directory)
                if let bytes = try store.load(savedAPIKeyEntry), !bytes.isEmpty {
                    var scoped = environment
                    scoped["OPENAI_API_KEY"] = String(decoding: bytes, as: UTF8.self)
                    guard let provider = APIKeyAuthProvider(environment: scoped) else { continue }
                    return (provider, source, .publicAPI)
                }
                guard let session = try ChatGPTSessionStore(store: store).load() else { continue }
                let sessions = ChatGPTSessionStore(store: try readOnly ? store : FileSecureStore(directory: directory))
                // Renewed by the issuer that signed it in (`codexctl login --issuer`), never another: the
                // refresh itself goes where the session says (ChatGPTSessionManager.renewingIssuer).
                return (ChatGPTSessionAuthProvider(session: session, issuer: .openAI, httpClient: httpClient, store: sessions), source, .chatGPT)
            }
        }
        if let empty { throw empty }
        return nil
    }

    /// Resolves the first source present: its credential, and the endpoint its profile needs.
    ///
    /// - Parameters:
    ///   - environment: The variables to read (default: the process's).
    ///   - codexHome: The Codex CLI home holding `auth.json` (default `$CODEX_HOME`, else `~/.codex`).
    ///   - savedCredentials: A ``FileSecureStore`` directory CodexKit saved a key or session in; `nil`
    ///     skips that source.
    ///   - order: The sources to try, in order (default: all, in the order above).
    ///   - httpClient: The client a ChatGPT session renews itself with.
    ///   - readOnly: Opens the saved-credentials store read-only, so a renewed session is not saved (for
    ///     programs that only look).
    /// - Returns: The credential and endpoint, or `nil` when no source is present.
    /// - Throws: ``CodexCore/AgentRuntimeError``: `invalid_endpoint` for an `OPENAI_BASE_URL` that breaks
    ///   the endpoint rules (naming the variable), `secure_store_failure` for an unreadable or malformed
    ///   sign-in file or store.
    public static func resolveIfPresent(
        _ environment: [String: String] = ProcessInfo.processInfo.environment,
        codexHome: URL? = nil,
        savedCredentials: URL? = nil,
        order: [Source] = Source.allCases,
        httpClient: any HTTPClient = DefaultHTTPClient(),
        readOnly: Bool = false
    ) throws -> ResponsesEnvironment? {
        guard let credential = try credentialIfPresent(
            environment, codexHome: codexHome, savedCredentials: savedCredentials, order: order, httpClient: httpClient, readOnly: readOnly
        ) else { return nil }
        let endpoint: ResponsesEndpoint = credential.profile == .publicAPI ? try publicAPI(environment) : .chatGPT
        return ResponsesEnvironment(authProvider: credential.authProvider, endpoint: endpoint, source: credential.source)
    }

    /// The same credential at another base URL, keeping the profile it needs (an API key never goes to
    /// the ChatGPT backend).
    /// - Throws: ``CodexCore/AgentRuntimeError`` `invalid_endpoint` for a base URL that breaks the rules.
    public func replacingBaseURL(_ baseURL: URL) throws -> ResponsesEnvironment {
        ResponsesEnvironment(authProvider: authProvider, endpoint: try ResponsesEndpoint(baseURL: baseURL, profile: endpoint.profile), source: source)
    }

    /// Resolves the first source present, as ``resolveIfPresent(_:codexHome:savedCredentials:order:httpClient:readOnly:)``.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `not_signed_in` naming every place looked at when no
    ///   source is present, or what ``resolveIfPresent(_:codexHome:savedCredentials:order:httpClient:readOnly:)`` throws.
    public static func resolve(
        _ environment: [String: String] = ProcessInfo.processInfo.environment,
        codexHome: URL? = nil,
        savedCredentials: URL? = nil,
        order: [Source] = Source.allCases,
        httpClient: any HTTPClient = DefaultHTTPClient(),
        readOnly: Bool = false
    ) throws -> ResponsesEnvironment {
        if let found = try resolveIfPresent(
            environment, codexHome: codexHome, savedCredentials: savedCredentials, order: order, httpClient: httpClient, readOnly: readOnly
        ) {
            return found
        }
        let places = order.compactMap { source -> String? in
            switch source {
            case .apiKeyVariable: "OPENAI_API_KEY"
            case .codexCLI: "the Codex CLI's auth.json"
            case .savedCredentials: savedCredentials == nil ? nil : "the credentials CodexKit saved"
            }
        }
        throw AgentRuntimeError(.notSignedIn("no credentials found (looked at \(places.joined(separator: ", ")))"))
    }

    /// The secure-store entry a saved API key is kept under.
    public static let savedAPIKeyEntry = "openai-api-key"

    /// The public API at `OPENAI_BASE_URL`, else the default base.
    /// - Throws: `invalid_endpoint` naming the variable.
    public static func publicAPI(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ResponsesEndpoint {
        guard let value = environment["OPENAI_BASE_URL"], !value.isEmpty else { return .publicAPI }
        guard let url = URL(string: value), url.scheme != nil else {
            throw AgentRuntimeError(.invalidEndpoint(reason: "OPENAI_BASE_URL is not a URL"))
        }
        do {
            return try ResponsesEndpoint(baseURL: url, profile: .publicAPI)
        } catch {
            throw AgentRuntimeError(.invalidEndpoint(reason: "OPENAI_BASE_URL: " + ((error as? AgentRuntimeError)?.message ?? "not a valid endpoint")))
        }
    }
}
