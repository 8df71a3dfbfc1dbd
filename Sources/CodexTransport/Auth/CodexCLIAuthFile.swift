package import CodexCore
import CodexSchema
public import Foundation

/// Read-only access to the Codex CLI's sign-in file (`$CODEX_HOME/auth.json`, else `~/.codex/auth.json`).
///
/// CodexKit never writes, refreshes or signs out of that file: it belongs to the CLI. On a 401 the
/// provider re-reads the file once, in case the CLI refreshed it meanwhile.
public struct CodexCLIAuthFile: Sendable {
    /// What the file holds.
    public enum Contents: Sendable, Hashable {
        /// A ChatGPT session.
        case chatGPT(ChatGPTSession)
        /// An API key.
        case apiKey(String)
    }

    /// The file's location.
    public let url: URL

    /// The largest file read (1 MiB): a larger one is refused before it is read.
    public static let maximumBytes = 1 << 20

    /// The file at `url`.
    public init(url: URL) {
        self.url = url
    }

    /// The default location: `$CODEX_HOME/auth.json`, else `~/.codex/auth.json`.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        if let home = environment["CODEX_HOME"], !home.isEmpty {
            url = URL(fileURLWithPath: home).appendingPathComponent("auth.json")
        } else {
            url = URL(fileURLWithPath: UserHome.path(environment)).appendingPathComponent(".codex/auth.json")
        }
    }

    /// Reads the file; `nil` when it does not exist.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `secure_store_failure` when it is unreadable, too large
    ///   or malformed, or `not_signed_in` when it holds neither tokens nor a key.
    public func read() throws -> Contents? {
        let reading = try readCredential()
        if let empty = reading.empty { throw empty }
        return reading.contents
    }

    /// What ``read()`` reads, with a file that holds no credential told apart from one whose credential
    /// is broken: `empty` is the `not_signed_in` error of the former (a source to pass over); every
    /// other failure is thrown.
    package func readCredential() throws -> (contents: Contents?, empty: AgentRuntimeError?) {
        let data: [UInt8]
        do {
            // Size-checked before it is read, and read only up to the limit.
            data = try BoundedInputFile.readAll(url.path, limit: Self.maximumBytes, regularFileOnly: true)
        } catch {
            if error.kind == .open, error.systemError == ENOENT || error.systemError == ENOTDIR { return (nil, nil) }
            throw AgentRuntimeError(.secureStore("the Codex CLI auth file is unusable: \(error)", underlying: error))
        }
        guard let json = try? JSONValue(parsing: data, options: .init(maximumDepth: 16)) else {
            throw AgentRuntimeError(.secureStore("the Codex CLI auth file is not valid JSON"))
        }
        if case .object(let tokens)? = json["tokens"], let idToken = tokens["id_token"]?.stringValue,
           let accessToken = tokens["access_token"]?.stringValue {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let lastRefresh = json["last_refresh"]?.stringValue.flatMap { formatter.date(from: $0) ?? ISO8601DateFormatter().date(from: $0) }
            return (.chatGPT(try ChatGPTSession(
                idToken: idToken, accessToken: accessToken, refreshToken: tokens["refresh_token"]?.stringValue ?? "",
                accountID: tokens["account_id"]?.stringValue, lastRefresh: lastRefresh
            )), nil)
        }
        if let key = json["OPENAI_API_KEY"]?.stringValue, !key.isEmpty { return (.apiKey(key), nil) }
        return (nil, AgentRuntimeError(.notSignedIn("the Codex CLI auth file \(url.path) holds no session or API key")))
    }
}

/// An ``AuthProvider`` over the Codex CLI's sign-in file (read-only).
public struct CodexCLIAuthProvider: AuthProvider {
    /// The file.
    public let file: CodexCLIAuthFile

    /// Creates a provider.
    public init(file: CodexCLIAuthFile = CodexCLIAuthFile()) {
        self.file = file
    }

    /// The file's credentials.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `not_signed_in` when the file is missing.
    public func credentials() async throws -> AuthCredentials {
        switch try file.read() {
        case .chatGPT(let session)?: return session.credentials
        case .apiKey(let key)?: return try await APIKeyAuthProvider(apiKey: key).credentials()
        case nil: throw AgentRuntimeError(.notSignedIn("the Codex CLI is not signed in"))
        }
    }

    /// The binding from the file (a local read).
    public func currentBinding() async -> String? { try? await credentials().binding }

    /// Re-reads the file: new credentials for the same binding, else `nil`.
    public func recoverAfterUnauthorized(_ rejected: AuthCredentials) async throws -> AuthCredentials? {
        guard let current = try? await credentials(), current.bearerToken != rejected.bearerToken else { return nil }
        guard current.binding == rejected.binding else {
            throw AgentRuntimeError(.accountMismatch("the Codex CLI is now signed in to a different account"))
        }
        return current
    }
}
